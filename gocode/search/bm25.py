"""BM25 over a tool set's entries, by tantivy: the index built (in memory or in a directory the
kept index owns), what each tool mentions (the coverage factor), the words that name servers,
and a query's hits with the coverage factor applied. Field weights and figures: docs/search.md."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import tantivy

from gocode.schema.names import camel
from gocode.search.analysis import CASE_WORD, LOWER_WORD, TOKENIZER, WORD, analyzer, first_sentence, fold, prepare
from gocode.search.entries import ToolEntry

# Field weights, chosen on the tuning half of tests/corpus/search_queries.json (see
# bench/search.py; a middle of the best region, not its single best point): a word in the name
# or the server's name says most about what a tool is for, the start of its description next;
# parameters and the rest of the description add recall.
_BOOSTS = {"name": 2.0, "desc": 1.0, "server": 2.5, "body": 0.4}
_DESC_HEAD_CHARS = 150
_BODY_CHARS = 2000

# A related word's weight against the query's own words; how many hits ranking considers.
RELATED_BOOST = 0.4
RERANK_DEPTH = 50
# A word names a server when it is in the server's name, starts several of its tool names
# (jira_…, ChEMBL_…) or is capitalised mid-sentence in several of its descriptions (Loki, Jira),
# and at most this many other servers mention it at all (so "time", "memory" or "fetch",
# common words, never do).
_NAME_OTHER_SERVERS = 2
_NAME_MIN_TOOLS = 2
_COVERAGE_POWER = 0.5


def _param_text(schema: Any, depth: int = 0) -> list[str]:
    """Names and descriptions of an input schema's properties (one level of nesting)."""
    if not isinstance(schema, dict) or depth > 1:
        return []
    props = schema.get("properties")
    out: list[str] = []
    if isinstance(props, dict):
        for name, sub in props.items():
            out.append(str(name))
            if isinstance(sub, dict):
                if isinstance(sub.get("description"), str):
                    out.append(sub["description"][:300])
                out.extend(_param_text(sub, depth + 1))
                out.extend(_param_text(sub.get("items"), depth + 1))
    return out


# A product or vendor name in running text: capitalised after a lower-case word (not at the start
# of a sentence), with a lower-case letter in it (GitHub, ChEMBL; not an acronym such as CSV).
_PROPER = re.compile(r"(?<=[a-z0-9,;:)] )[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*")


def server_names(tools: Sequence[ToolEntry]) -> dict[str, frozenset[int]]:
    """Lower-case words that name a server (its name, its tools' shared prefix, the product and
    vendor names its descriptions capitalise), each with the entries of the servers it names."""
    by_server: dict[str, list[int]] = {}
    for i, e in enumerate(tools):
        by_server.setdefault(e.server, []).append(i)
    mentions: dict[str, set[str]] = {}  # word → servers whose names or descriptions contain it
    candidates: dict[str, set[str]] = {}  # server → words that may name it
    own: dict[str, set[str]] = {}  # server → the words of its own name
    for server, ids in by_server.items():
        name_words = {w.lower() for w in WORD.findall(server)} | {fold(server)}
        for w in list(name_words):
            name_words.update(x.lower() for x in CASE_WORD.findall(w))
        own[server] = name_words
        prefixes: dict[str, int] = {}
        proper: dict[str, int] = {}
        plain: dict[str, int] = {}  # words written in lower case in running text
        for i in ids:
            e = tools[i]
            head = re.split(r"[_\-.]", e.tool)[0]
            first = head if head != e.tool else next(iter(CASE_WORD.findall(e.tool)), "")
            if first:
                # A capitalised prefix (ChEMBL_, CTIS_) names a product however few tools share it.
                weight = len(ids) if first != first.lower() else 1
                prefixes[first.lower()] = prefixes.get(first.lower(), 0) + weight
            text = f"{e.description} {e.info.title or ''}"
            for w in _PROPER.findall(text):
                proper[w.lower()] = proper.get(w.lower(), 0) + 1
            for w in LOWER_WORD.findall(text):
                plain[w] = plain.get(w, 0) + 1
            for w in {w.lower() for w in WORD.findall(f"{e.tool} {text}")}:
                mentions.setdefault(w, set()).add(server)
        # A prefix most of a server's tools share (jira_…, browser_…), or a capitalised one.
        picked = name_words | {w for w, n in prefixes.items() if n >= max(_NAME_MIN_TOOLS, 0.15 * len(ids))}
        # A name is written capitalised, in several descriptions, and hardly ever in lower case.
        picked |= {w for w, n in proper.items() if n >= _NAME_MIN_TOOLS and plain.get(w, 0) * 4 <= n}
        candidates[server] = {w for w in picked if len(w) >= 3}
    out: dict[str, set[int]] = {}
    for server, picked in candidates.items():
        for w in picked:
            others = {s for s in mentions.get(w, ()) if s != server and w not in own[s]}
            if len(others) <= _NAME_OTHER_SERVERS:
                out.setdefault(w, set()).update(by_server[server])
    return {w: frozenset(ids) for w, ids in out.items()}


@dataclass(frozen=True)
class Lexical:
    schema: Any
    searcher: Any
    terms: list[frozenset[str]]  # per entry: the words it mentions at all (the coverage factor)
    named: dict[str, frozenset[int]]  # per word: the entries of the servers it names
    name_terms: list[frozenset[str]]  # per entry: its name's words, its server's words aside


def lexical_state(lex: Lexical) -> dict[str, Any]:
    """What a kept index stores beside tantivy's files: every part but the index itself."""
    return {f.name: getattr(lex, f.name) for f in fields(lex) if f.name not in ("schema", "searcher")}


def reopen_lexical(directory: str, state: dict[str, Any]) -> Lexical:
    """A kept index (:func:`lexical_state` beside tantivy's files in ``directory``) opened again."""
    index = tantivy.Index.open(directory)
    index.register_tokenizer(TOKENIZER, analyzer())
    return Lexical(schema=index.schema, searcher=index.searcher(), **state)


def build(entries: Sequence[ToolEntry], directory: str | None = None) -> Lexical:
    """BM25's index of ``entries`` (in ``directory``, else in memory) and what else ranking reads per tool."""
    schema_builder = tantivy.SchemaBuilder()
    schema_builder.add_unsigned_field("id", stored=True, indexed=False)
    for name in _BOOSTS:
        schema_builder.add_text_field(name, tokenizer_name=TOKENIZER, index_option="freq")
    schema = schema_builder.build()
    index = tantivy.Index(schema) if directory is None else tantivy.Index(schema, path=directory)
    index.register_tokenizer(TOKENIZER, analyzer())
    writer = index.writer(15_000_000, 1)
    terms: list[frozenset[str]] = []
    for i, e in enumerate(entries):
        desc = e.description
        head = first_sentence(desc)[:_DESC_HEAD_CHARS]
        body = " ".join([desc[len(head) : len(head) + _BODY_CHARS], *_param_text(e.info.input_schema)])
        fields = {
            # The tool's own Go spelling, never the server-prefixed one a name clash gives: how a
            # tool ranks does not depend on which other servers have a tool of that name.
            "name": prepare(f"{e.tool} {camel(e.tool)} {e.info.title or ''}"),
            "server": prepare(e.server),
            "desc": prepare(head),
            "body": prepare(body),
        }
        doc = tantivy.Document()
        doc.add_unsigned("id", i)
        for field, text in fields.items():
            doc.add_text(field, text)
        writer.add_document(doc)
        # Which words a tool mentions at all, for the coverage factor in search().
        terms.append(frozenset(analyzer().analyze(" ".join(fields.values()))))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    named = server_names(entries)
    # The words of each tool's name that say what it does: not the words naming its server
    # that most of the server's tools share (git_…, jira_…), which tell them apart from
    # nothing; a server word only some of its tools carry (weather's get_weather beside
    # get_city) does say what that tool is for.
    naming: dict[int, set[str]] = {}
    for w, ids in named.items():
        for i in ids:
            naming.setdefault(i, set()).add(w)
    words = [frozenset(analyzer().analyze(prepare(e.tool))) for e in entries]
    per_server: dict[str, Counter[str]] = {}
    for e, ws in zip(entries, words, strict=True):
        per_server.setdefault(e.server, Counter()).update(ws)
    sizes = Counter(e.server for e in entries)
    name_terms: list[frozenset[str]] = []
    for i, e in enumerate(entries):
        server_words = set(analyzer().analyze(prepare(" ".join([e.server, *naming.get(i, ())]))))
        shared = {t for t in server_words if 2 * per_server[e.server][t] > sizes[e.server]}
        name_terms.append(words[i] - shared)
    return Lexical(schema, searcher, terms, named, name_terms)


def search(
    lex: Lexical, base: set[str], own: list[str], related: list[str], limit: int, extra: dict[str, float] | None = None
) -> list[tuple[int, float]]:
    """(entry index, score) by BM25 with the coverage factor over the query words ``base``,
    best first (at most RERANK_DEPTH); ``extra`` terms at their own weights."""
    weighted = [(t, 1.0) for t in own] + [(t, RELATED_BOOST) for t in related] + list((extra or {}).items())
    clauses = [
        (tantivy.Occur.Should, tantivy.Query.boost_query(tantivy.Query.term_query(lex.schema, f, t), boost * w))
        for f, boost in _BOOSTS.items()
        for t, w in weighted
    ]
    query_obj = tantivy.Query.boolean_query(clauses)
    hits = lex.searcher.search(query_obj, max(limit, RERANK_DEPTH)).hits
    ids = [lex.searcher.doc(addr)["id"][0] for _, addr in hits]
    # BM25 sums per-term scores, so one rare word in a short name can outweigh a tool that
    # matches most of the request; weight each score by the share of the query's words the
    # tool mentions anywhere (Lucene's classic "coord" factor).
    scored = [
        (score * (len(base & lex.terms[i]) / len(base)) ** _COVERAGE_POWER, -rank, i)
        for rank, ((score, _), i) in enumerate(zip(hits, ids, strict=True))
    ]
    scored.sort(reverse=True)
    return [(i, score) for score, _, i in scored]
