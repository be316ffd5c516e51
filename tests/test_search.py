"""The tool search index and name lookup (pure: no Go, no servers), and the search quality floor."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys

import pytest

from gocode.errors import SearchRequestError
from gocode.schema.builder import build_package
from gocode.search.analysis import first_sentence, fold, prepare, query_terms, split_values
from gocode.search.answer import answer, answer_text, missing_note
from gocode.search.index import SearchIndex
from gocode.toolset import ServerTools, ToolInfo, ToolSet
from tests.conftest import ROOT, load_script


def _bench():
    return load_script("bench/search.py", "bench_search")


@functools.cache
def corpus(semantic: bool = True) -> tuple[SearchIndex, object]:
    bench = _bench()
    return bench.corpus_index(semantic=semantic), bench


def small() -> tuple[SearchIndex, ToolSet]:
    tools = (
        ToolInfo("time", "get_current_time", "Get current time in a specific timezone", {"properties": {"tz": {}}}),
        ToolInfo("time", "convert_time", "Convert time between timezones"),
    )
    other = (
        ToolInfo("gh", "list_pull_requests", "List pull requests in a GitHub repository."),
        ToolInfo("gh.legacy", "list_pull_requests", "List PRs."),
        ToolInfo("gh", "getMe", "Details of the authenticated user."),
    )
    ts = ToolSet((ServerTools("time", tools), ServerTools("gh", other[::2]), ServerTools("gh.legacy", other[1:2])))
    return SearchIndex.build(ts, build_package(ts)), ts


def qualified(entries) -> list[str]:
    return [e.qualified for e in entries]


def test_words_of_names_are_split_and_abbreviations_spelled_out():
    assert prepare("getCurrentTime") == "get current time"
    assert prepare("list_PRs in my repo") == "list prs pull requests in my repo repository"
    assert fold("get_current_time") == fold("GetCurrentTime") == fold("getCurrentTime") == "getcurrenttime"
    own, related = query_terms("who is on call")
    assert "oncal" in own  # words run together, as tool names write them, then stemmed
    assert "show" not in related and query_terms("show the logs")[1]  # related verbs come only from the query's own
    assert first_sentence("Get a thing. Then more. ") == "Get a thing."


@pytest.mark.parametrize(
    "name",
    [
        "get_current_time",
        "getCurrentTime",
        "GetCurrentTime",
        "GET_CURRENT_TIME",
        "time.get_current_time",
        "time.getCurrentTime",
    ],
)
def test_lookup_accepts_the_names_a_model_writes(name):
    index, _ = small()
    assert qualified(index.lookup(name)) == ["time.get_current_time"]


def test_lookup_of_a_name_on_two_servers_gives_both_and_server_prefix_picks_one():
    index, _ = small()
    assert sorted(qualified(index.lookup("list_pull_requests"))) == [
        "gh.legacy.list_pull_requests",
        "gh.list_pull_requests",
    ]
    # A server name with a dot: the longest server that fits wins.
    assert qualified(index.lookup("gh.legacy.list_pull_requests")) == ["gh.legacy.list_pull_requests"]
    assert qualified(index.lookup("gh.listPullRequests")) == ["gh.list_pull_requests"]
    assert index.lookup("get_current_timezone") == []


def test_a_name_like_no_tool_still_gets_suggestions():
    index, _ = small()
    assert index.suggest("getCurentTime") == ["getCurrentTime"]
    # Nothing spelled or meant alike: no "did you mean", however few the tools are.
    assert index.suggest("nosuch") == []


def _weather_and(*extra: ToolInfo) -> SearchIndex:
    tools = (
        ToolInfo("weather", "get_city", "Get current city location."),
        ToolInfo("weather", "get_weather", "Get current weather data for a location."),
        *extra,
    )
    servers = dict.fromkeys(t.server for t in tools)
    ts = ToolSet(tuple(ServerTools(s, tuple(t for t in tools if t.server == s)) for s in servers))
    return SearchIndex.build(ts, build_package(ts), semantic=False)


@pytest.mark.fast
def test_did_you_mean_names_only_close_tools_and_otherwise_says_what_there_is():
    index = _weather_and()
    assert index.suggest("get_wether") == ["getWeather"]  # spelled alike
    assert index.suggest("city_lookup") == ["getCity"]  # named in the same words
    assert index.suggest("fetch_weather") == ["getWeather"]
    # A word most names have says nothing: get_temperature is not close to getCity.
    assert index.suggest("get_temperature") == [] and index.suggest("nosuch") == []
    assert missing_note(index, "get_wether") == "no tool named 'get_wether'; did you mean getWeather?"
    # A handful of tools, none close: said so, and every one named.
    assert (
        missing_note(index, "nosuch")
        == "no tool named 'nosuch' nor one close to it; the tools are: getCity, getWeather"
    )
    many = _weather_and(*(ToolInfo("git", f"git_{v}", f"Git {v}.") for v in ("log", "diff", "status", "add", "commit")))
    assert missing_note(many, "nosuch", "`gocode search WORDS…` finds tools by what they do") == (
        "no tool named 'nosuch' nor one close to it; `gocode search WORDS…` finds tools by what they do"
    )
    assert missing_note(many, "nosuch").endswith("; search with a `query` saying what it does")
    assert missing_note(SearchIndex([]), "x") == "no tool named 'x'; there are no tools"
    assert missing_note(many, "git_lg") == "no tool named 'git_lg'; did you mean gitLog?"
    assert many.suggest("show_log") == ["gitLog"] and many.suggest("get_forecast") == []


@pytest.mark.fast
def test_the_nearest_tools_of_a_query_nothing_fits_without_models():
    index = _weather_and()
    assert not index.ranking("plan a birthday party", 5).fits and index.search("plan a birthday party", 5) == []
    # No word shared and no model to measure meaning: a handful of tools are all the nearest.
    assert qualified(index.nearest("plan a birthday party", 5)) == ["weather.get_city", "weather.get_weather"]
    assert qualified(index.nearest("city", 5))[0] == "weather.get_city"  # the ranking's, when it has any
    many = _weather_and(*(ToolInfo("git", f"git_{v}", f"Git {v}.") for v in ("log", "diff", "status", "add", "commit")))
    assert many.nearest("plan a birthday party", 5) == []


def test_a_query_naming_a_product_ranks_its_server_first():
    """Two servers with the same kind of tool: the one the query names (by its server name, its
    tools' prefix, or the product its descriptions name) comes first."""
    tools = []
    for server, product in (("alpha", "Pagebell"), ("bravo", "Hookline"), ("charlie", "Stackwatch")):
        tools += [
            ToolInfo(server, "list_incidents", f"List the open incidents of your {product} account."),
            ToolInfo(server, "get_incident", f"Get one {product} incident by id."),
            ToolInfo(server, f"{server}_ack_incident", f"Acknowledge a {product} incident."),
        ]
    ts = ToolSet(tuple(ServerTools(s, tuple(t for t in tools if t.server == s)) for s in ("alpha", "bravo", "charlie")))
    index = SearchIndex.build(ts, build_package(ts))
    for query, server in [
        ("list the open incidents in Hookline", "bravo"),
        ("show incidents according to charlie", "charlie"),
        ("open incidents on my stackwatch account", "charlie"),
        ("list incidents in Pagebell", "alpha"),
    ]:
        assert index.search(query, 3)[0].server == server, (query, qualified(index.search(query, 3)))
    assert index.search("list the open incidents", 3)[0].tool == "list_incidents"  # none named: all alike


def _merge_requests() -> SearchIndex:
    """A code host whose approval-state tool shares every word with an approval request."""
    tools = (
        ToolInfo(
            "hostlab",
            "get_merge_request_approval_state",
            "Get the approval state of a merge request: who must approve the merge request and who did.",
        ),
        ToolInfo("hostlab", "approve_merge_request", "Give your approval as the current user."),
        ToolInfo("hostlab", "list_merge_requests", "List merge requests."),
        ToolInfo("editor", "get_config", "Get the editor configuration."),
        ToolInfo("editor", "find_references", "Where a symbol is called from."),
    )
    ts = ToolSet(tuple(ServerTools(s, tuple(t for t in tools if t.server == s)) for s in ("hostlab", "editor")))
    return SearchIndex.build(ts, build_package(ts), semantic=False)


@pytest.mark.fast
def test_among_a_named_servers_tools_the_one_whose_name_the_request_says_comes_first(monkeypatch):
    from gocode.search import index as search

    index = _merge_requests()
    query = "approve merge request !42 in HostLab"
    assert index.search(query, 3)[0].tool == "approve_merge_request", qualified(index.search(query, 3))
    monkeypatch.setattr(search, "_NAME_SHARE", 0.0)  # BM25 alone prefers the longer description
    assert index.search(query, 3)[0].tool == "get_merge_request_approval_state"


@pytest.mark.fast
def test_a_server_word_only_some_of_its_tools_carry_still_says_what_a_tool_is_for():
    """A request naming the weather server asks about the weather: the server's word is dropped
    from its tools' names only where most of them share it (git_…), never where it tells one
    tool from the others."""
    tools = (
        ToolInfo("weather", "get_city", "Get current city location."),
        ToolInfo("weather", "get_weather", "Get current weather data for a location."),
        ToolInfo("git", "git_log", "Show the commit logs."),
        ToolInfo("git", "git_status", "Show the working tree status."),
        ToolInfo("git", "git_diff", "Show changes."),
    )
    ts = ToolSet(tuple(ServerTools(s, tuple(t for t in tools if t.server == s)) for s in ("weather", "git")))
    index = SearchIndex.build(ts, build_package(ts), semantic=False)
    index.search("weather", 1)  # builds the index
    said = {e.tool: set(terms) for e, terms in zip(index.entries, index._lex().name_terms, strict=True)}
    assert said == {
        "get_city": {"citi"},  # stemmed; "get" is a stop word
        "get_weather": {"weather"},
        "git_log": {"log"},
        "git_status": {"status"},
        "git_diff": {"diff"},
    }
    # With both words asked, the name says as much of either tool: no bonus tips it to get_city.
    assert index._name_cover(0, {"city", "weather"}, set()) == index._name_cover(1, {"city", "weather"}, set())


@pytest.mark.fast
def test_values_in_a_request_count_little(monkeypatch):
    from gocode.search import index as search

    assert split_values("Find every place that calls parse_config") == ("Find every place that calls  ", "parse_config")
    asked, given = split_values("Leave a comment on 'Roadmap' about https://x.io/a, PROJ-142 and src/app.py")
    assert given.split() == ["'Roadmap'", "https://x.io/a,", "PROJ-142", "src/app.py"] and "Leave a comment" in asked
    # Apostrophes in words are not quotes.
    assert split_values("I'll be late, it's Bob's") == ("I'll be late, it's Bob's", "")
    index = _merge_requests()
    query = "where is parse_config called"
    assert index.search(query, 2)[0].tool == "find_references", qualified(index.search(query, 2))
    monkeypatch.setattr(search, "split_values", lambda q: (q, ""))  # the value's words as the request's
    assert index.search(query, 2)[0].tool == "get_config"


@pytest.mark.fast
def test_a_query_naming_a_server_fits_it():
    index = _merge_requests()
    assert index.ranking("keep an eye on it in HostLab", 3).fits
    assert not index.ranking("keep an eye on it", 3).fits


def test_an_answer_shows_the_best_in_full_and_the_next_in_a_line_each():
    index, _ = corpus()
    got = answer(index, {"query": "list the open pull requests of a repository"})
    assert 1 <= len(got.found) <= 3 and len(got.found) + len(got.more) == 10
    text = answer_text(index_package(), got)
    assert text.count("\nfunc ") == len(got.found)
    lines = [line for line in text.splitlines() if line.startswith("// ") and ": " in line and " — " in line]
    assert [line.split(":")[0][3:] for line in lines[-len(got.more) :]] == [e.server for e in got.more]
    assert f"// {got.more[0].server}: {got.more[0].function} — " in text


def test_a_query_nothing_fits_says_so_and_lists_the_nearest():
    index, _ = corpus()
    got = answer(index, {"query": "plan a surprise birthday party for my grandmother"})
    assert got.notes == ("no tool fits 'plan a surprise birthday party for my grandmother'; the nearest are listed",)
    assert not got.found and got.more
    assert "// Nearest (" in answer_text(index_package(), got)
    # A query sharing no word with any tool and meaning nothing close to one still has nearest tools.
    assert index.search("zzzqqq", 5) == [] and len(index.nearest("zzzqqq", 5)) == 5
    assert answer(index, {"query": "list open pull requests"}).notes == ()


@functools.cache
def index_package():
    from tests.corpus_data import CORPUS, load

    return build_package(ToolSet(tuple(s for p in sorted(CORPUS.glob("real/*.json")) for s in load(p).servers)))


def test_suggestions_for_a_misspelled_name():
    index, _ = small()
    assert index.suggest("getCurentTime")[0] == "getCurrentTime"
    assert index.suggest("time.get_curent_time")[0] == "getCurrentTime"


def test_search_ranks_and_never_parses_query_syntax():
    index, _ = small()
    assert qualified(index.search("what time is it in Tokyo", 1)) in (["time.get_current_time"], ["time.convert_time"])
    assert qualified(index.search("open PRs", 2))[0].endswith("list_pull_requests")
    for hostile in ['title:"x', "a AND (b OR", "*", "\x00\u202e", "-", "NOT NOT", "field:[a TO b]"]:
        index.search(hostile, 5)  # no exception
    assert index.search("", 5) == [] and index.search("the of and", 5) == []


def test_untrusted_tool_names_and_descriptions_index():
    tools = (
        ToolInfo("s", "ünïcödé_tool", "Ünïcode \u202e reversed text \x00 and `code`"),
        ToolInfo("s", "", ""),
        ToolInfo("s", "x" * 300, "y " * 10000, {"properties": {"a" * 500: {"description": 5}}}),
    )
    ts = ToolSet((ServerTools("s", tools),))
    index = SearchIndex.build(ts, build_package(ts))
    assert len(index.entries) == 3
    assert index.search("reversed text", 1)[0].tool == "ünïcödé_tool"


def test_an_answer_keeps_the_rank_order_across_servers():
    index, ts = small()
    got = answer(index, {"names": ["time.convert_time", "gh.list_pull_requests", "time.get_current_time"]})
    text = answer_text(build_package(ts), got)
    assert re.findall(r"^func (\w+)\(", text, re.M) == ["convertTime", "listPullRequests", "getCurrentTime"], text
    assert [line for line in text.splitlines() if line.startswith("// =====")] == [
        "// ===== server time (1 tool) =====",
        "// ===== server gh (1 tool) =====",
        "// ===== server time (1 tool) =====",
    ]


def test_answer_by_names_and_query_and_its_errors():
    index, ts = small()
    got = answer(index, {"names": ["getCurrentTime", "nope_tool"], "query": "convert between timezones", "limit": 1})
    assert qualified(got.found) == ["time.get_current_time", "time.convert_time"]
    assert got.notes and got.notes[0].startswith("no tool named 'nope_tool'")
    text = answer_text(build_package(ts), got)
    assert "func getCurrentTime(" in text and "func convertTime(" in text and "// no tool named 'nope_tool'" in text

    with pytest.raises(SearchRequestError, match="give a `query`"):
        answer(index, {})
    with pytest.raises(SearchRequestError, match="give a `query`"):
        answer(index, {"query": "  ", "names": []})
    with pytest.raises(SearchRequestError, match=r"no tool named 'getCurentTime'; did you mean getCurrentTime"):
        answer(index, {"names": ["getCurentTime"]})
    with pytest.raises(SearchRequestError, match="`names` must be a list"):
        answer(index, {"names": "getCurrentTime"})
    with pytest.raises(SearchRequestError, match="`limit`"):
        answer(index, {"query": "time", "limit": 0})
    with pytest.raises(SearchRequestError, match="unknown argument 'code'"):
        answer(index, {"code": "x"})
    echo = ToolInfo("everything", "echo", "Echoes")
    with pytest.raises(SearchRequestError, match=r"'everything\.echo' is not a Go function: call it as a regular tool"):
        answer(index, {"names": ["everything.echo"]}, [echo])
    with pytest.raises(SearchRequestError, match="at most 50 `names`"):
        answer(index, {"names": ["x"] * 51})
    assert answer(index, {"query": "time " * 10000}).found  # a long query is cut, not refused


def test_corpus_lookup_and_search():
    index, _ = corpus()
    assert len(index.entries) > 1000
    assert qualified(index.lookup("time.get_current_time")) == ["time.get_current_time"]
    assert qualified(index.search("list open pull requests on my GitHub repo", 2))[0].endswith(".list_pull_requests")


def test_the_query_set_names_real_tools():
    index, bench = corpus()
    known = {e.qualified for e in index.entries}
    items = bench.queries()
    assert len(items) >= 150
    assert {q["set"] for q in items} == {"tune", "dev", "dev2", "heldout", *(f"fresh{n}" for n in range(1, 9))}
    for q in items:
        # Only the latest sets have queries no tool fits (the answer should say so).
        assert (q["tools"] or q["set"] in ("fresh6", "fresh7", "fresh8")) and set(q["tools"]) <= known, q


def test_bm25_quality_floor():
    """BM25 alone on the "heldout" set: top-1 81.7%, top-3 90.1% (bench/search.py --bm25). The
    floor sits below, so a small change cannot fail it, but a broken index, analyser or ranking does."""
    index, bench = corpus(semantic=False)
    assert index.ranker == "bm25"
    held = [q for q in bench.queries() if q["set"] == "heldout"]
    rates = bench.rates(bench.evaluate(index, held))
    assert rates["top1"] >= 0.72 and rates["top3"] >= 0.82, json.dumps(rates)


def test_search_ranks_by_meaning_too_and_that_is_what_holds_the_fresh_sets():
    """On the fresh sets (390 phrasings written from tool names only) BM25 alone finds 68.5% in
    the top 3 and 49.7% first; fused with the two embedding models 80.5% and 60.5%
    (bench/search.py). The floors are above what BM25 alone reaches: without the models (not
    fetched by the warm-up, not loadable) this fails."""
    index, bench = corpus()
    assert index.ranker == "bm25+bge-small-en-v1.5-q+all-minilm-l6-v2-q"
    fresh = [q for q in bench.queries() if q["set"].startswith("fresh")]
    rates = bench.rates(bench.evaluate(index, fresh))
    assert rates["top3"] >= 0.78 and rates["top1"] >= 0.57, json.dumps(rates)
    # Words shared with no tool's description: found by meaning alone.
    got = [e.qualified for e in index.search("unstage everything I added", 3)]
    assert "git.git_reset" in got, got
    # Nonsense shares no word with any tool and means nothing close to one: nothing found.
    assert index.search("zzzqqq", 5) == [] and index.search("asdf qwer", 5) == []


def test_the_models_also_read_a_request_without_its_values(monkeypatch):
    """Branch names and a quoted title pull the request's embedding towards merge_pull_request
    and get_pull_request; mixed with the request embedded without them, the tool for what is
    asked (opening a pull request) comes first. The learned weighing reads both similarities
    apart, so the mix is checked on the hand-set fusion, whose share of them it sets."""
    from gocode.search import index as search
    from gocode.search import learned

    index, _ = corpus()
    query = "Open a pull request on GitHub from feature/auth into main titled 'Add OAuth login'"
    assert index.search(query, 3)[0].tool == "create_pull_request", qualified(index.search(query, 3))
    monkeypatch.setenv(learned.DISABLE_ENV, "0")
    assert index.search(query, 3)[0].tool == "create_pull_request", qualified(index.search(query, 3))
    monkeypatch.setattr(search, "_ASKED_SHARE", 0.0)  # the request as written only
    assert index.search(query, 3)[0].tool != "create_pull_request"


def test_one_model_alone_still_ranks_by_meaning(monkeypatch):
    """A cache holding only one of the models (a fetch that failed half-way) still fuses it."""
    from gocode.search import semantic

    monkeypatch.setattr(semantic, "MODELS", (semantic.MODEL,))
    index = _bench().corpus_index()
    assert index.ranker == "bm25+bge-small-en-v1.5-q"
    got = [e.qualified for e in index.search("unstage everything I added", 3)]
    assert "git.git_reset" in got, got
    assert index.search("zzzqqq", 5) == []


def test_the_bench_script_prints_its_figures():
    # Two sets, not all ten: answering and rendering every query takes minutes on a loaded machine.
    proc = subprocess.run(
        [sys.executable, "bench/search.py", "--json", "--sets", "heldout,fresh6"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    assert set(doc["sets"]) == {"heldout", "fresh6", "fresh", "all"}
    fresh6 = doc["sets"]["fresh6"]
    assert fresh6["queries"] == 100 and fresh6["nofit"] == 5 and 0 < fresh6["answerTokensMean"] < 2000
    assert fresh6["top1"] <= fresh6["top3"] <= fresh6["visible"]
    assert doc["ranker"] == "bm25+bge-small-en-v1.5-q+all-minilm-l6-v2-q"
    assert doc["sets"]["all"]["queries"] == 171 and doc["tools"] > 1000 and doc["servers"] == 47


def test_an_answer_without_a_limit_leaves_out_tools_far_behind_the_best():
    index, _ = corpus()
    query = "what time is it in Tokyo"
    ranked = qualified(index.search(query, 5))
    got = qualified(answer(index, {"query": query}).found)
    assert len(ranked) == 5 and got == ranked[: len(got)] and 1 <= len(got) < 5, (got, ranked)
    assert got[0] == "time.get_current_time"
    # A limit the model gives is taken as asked, and one too large is said to be.
    assert qualified(answer(index, {"query": query, "limit": 5}).found) == ranked
    assert "at most 25 tools per answer" in answer(index, {"query": query, "limit": 30}).notes


@pytest.mark.fast
def test_the_shipped_learned_weighing_loads_and_prefers_the_tool_every_signal_points_to():
    """The trees bench/learn_rank.py trained (gocode/search/rank_model.json) read the features
    search computes, and score a candidate that BM25, both models and the named server point to
    above one they all pass over."""
    import numpy as np

    from gocode.search import learned
    from gocode.search.index import FEATURES

    trees = learned.trees(FEATURES)
    assert trees is not None
    strong = dict.fromkeys(FEATURES, 0.0) | {
        "fused": 1.2,
        "lexical": 1.0,
        "coverage": 1.0,
        "named": 1.0,
        "name_cover": 1.0,
        "named_name_cover": 1.0,
        "verb": 1.0,
        "lexical_rank": 1.0,
        "meaning_rank": 1.0,
        "description_length": 0.2,
    }
    strong |= {f: 1.0 for f in FEATURES if f.endswith(":scaled")}
    weak = dict.fromkeys(FEATURES, 0.0) | {"fused": 0.1, "fused_gap": -1.1, "lexical_rank": 0.05, "meaning_rank": 0.02}
    weak |= {f: -0.3 for f in FEATURES if f.endswith("_gap") and ":" in f}
    scores = trees.score(np.array([[row[f] for f in FEATURES] for row in (weak, strong)]))
    assert scores[1] > scores[0] + 1, scores


def test_the_learned_weighing_ranks_the_corpus_and_leaves_no_fit_alone():
    """With both models the ranking orders by the learned weighing (its scores stay the fused
    ones), a clear request still finds its tool first, and a request naming nothing no tool
    fits is still said to fit nothing."""
    index, _ = corpus()
    query = "list the open pull requests of a GitHub repository"
    ranking, sig = index.ranking(query, 5), index.signals(query)
    assert sig is not None and sig.learned is not None and sig.order is sig.learned
    assert ranking.fits and ranking.scored[0][0].tool == "list_pull_requests", ranking.tools
    best = sorted(sig.learned, key=lambda i: (-sig.learned[i], i))[:5]
    assert ranking.scored == tuple((index.entries[i], sig.fused[i]) for i in best)
    assert not index.ranking("order me a large pepperoni pizza for delivery", 5).fits
    assert index.search("zzzqqq", 5) == []


@pytest.mark.fast
def test_a_request_is_split_where_each_part_starts_an_action():
    """Cut at hard punctuation, and at a comma or a conjunction before an action; never inside a
    value; a request that does not start with an action, or whose parts say nothing past their
    verb, is one request."""
    from gocode.search import parts

    actions = parts.action_words({"log", "write", "read", "list", "rename", "find", "replace", "create"})
    assert {"save", "show", "get"} <= actions  # related to write, list, read (the analyser's table)
    split = functools.partial(parts.split, actions=actions, leads=frozenset({"git"}))
    assert split("git log latest commit author and changed files; write text file") == [
        "git log latest commit author and changed files",
        "write text file",
    ]
    assert split("find callers of parse_config, then please rename it") == [
        "find callers of parse_config",
        "please rename it",
    ]
    assert split("read 'notes; draft' and then save it to src/a.py") == ["read 'notes; draft'", "save it to src/a.py"]
    for one in (
        "why did the build fail? show me the logs",  # a question with its request: one
        "find and replace text in a Word document",  # one action on one object
        "get the diff between HEAD and a branch",  # an article, not an action, after "and"
        "list open pull requests",
    ):
        assert split(one) == [one], one
    many = split("list a. read b. write c. create d. rename e. find f")
    assert len(many) == parts.MAX_PARTS and many[-1] == "create d rename e find f"


def test_a_request_in_parts_gets_the_best_declarations_for_each_part():
    """Each part is searched alone (with the servers the request names) and answered under its
    own heading, each type declared once in the whole answer; a part nothing fits says so; a
    request one tool does whole is answered as one; the answer keeps within a token budget."""
    from gocode.view import tokens

    index, _ = corpus()
    pkg = index_package()
    got = answer(index, {"query": "git log latest commit author and changed files; write text file"})
    assert [p.text for p in got.parts] == ["git log latest commit author and changed files", "write text file"]
    assert "git.git_log" in qualified(got.parts[0].found)
    assert any(e.tool == "write_file" for e in got.parts[1].found), qualified(got.parts[1].found)
    text = answer_text(pkg, got)
    first, second = text.index("// ----- 1. 'git log latest"), text.index("// ----- 2. 'write text file' -----")
    assert first < text.index("func gitLog(") < second < text.index("func writeFile(")
    declared = re.findall(r"^type (\w+) ", text, re.M)
    assert len(declared) == len(set(declared)) and text.count("func ptr[") <= 1
    assert tokens.count(text) < 1500

    got = answer(index, {"query": "list the open pull requests, then schedule a massage for saturday afternoon"})
    assert len(got.parts) == 2 and got.parts[0].text == "list the open pull requests"
    assert got.parts[1].note == "no tool fits 'schedule a massage for saturday afternoon'; the nearest are listed"
    assert "// no tool fits 'schedule a massage" in answer_text(pkg, got)

    # "Mark … resolved and assign it to me" is one tool's work: answered as one request.
    one = answer(index, {"query": "Mark Sentry issue BACKEND-12 as resolved and assign it to me"})
    assert one.parts == () and qualified(one.found)[0] == "sentry.update_issue"

    # Over budget: full declarations become lines, the last first, while a part keeps more than one.
    wide = answer(index, {"query": "run a shell command and read its output"})
    assert len(wide.parts) == 2 and sum(len(p.found) for p in wide.parts) > 2
    full, tight = answer_text(pkg, wide), answer_text(pkg, wide, budget=600)
    assert tokens.count(tight) < tokens.count(full) and len(re.findall(r"^func \w+\(", tight, re.M)) == 2, tight


def test_single_requests_answer_as_before():
    """Of the 1,160 phrasings of the query sets (each one request), all but a handful that ask
    for two actions in turn are answered as one request."""
    index, bench = corpus()
    split = [q["query"] for q in bench.queries() if answer(index, {"query": q["query"]}).parts]
    assert len(split) <= 5, split


@pytest.mark.fast
def test_splitting_a_request_is_linear_in_it():
    """A request is untrusted: 20,000 characters of one cut, conjunction or lead-in word split
    in well under a second (each cut reads a bounded stretch past it; reading the whole rest
    from every cut took 4 to 9 s)."""
    import time

    from gocode.search import parts

    actions = parts.action_words({"list", "read"})
    for unit in (",", "and ", " and list x", "; a", ". read y", "\n", "then also ", "'a; b' and "):
        text = (unit * (20_000 // len(unit) + 1))[:20_000]
        start = time.perf_counter()
        got = parts.split(text, actions)
        assert time.perf_counter() - start < 1.0, unit
        assert 1 <= len(got) <= parts.MAX_PARTS
