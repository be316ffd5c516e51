"""How search reads text: identifiers split into words, stop words dropped, words stemmed
(English Snowball), a few abbreviations every developer writes spelled out on both sides (``pr`` →
pull request), the related words a request implies, and the values it quotes (docs/search.md).

Pure, and shared by the index (:mod:`gocode.search.index`) and the answer format
(:mod:`gocode.search.answer`).
"""

from __future__ import annotations

import itertools
import re
from functools import cache

import tantivy

from gocode.schema.names import words

# Words that carry no meaning in a request for a tool (Lucene's English list, plus the way
# people phrase requests: "what", "my", "please", "I want to").
STOP_WORDS = sorted(
    set(
        "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
        "they this to was will with what which who whom how do does did can could would should please my me i "
        "we our us you your want need some any all from give tell using use via its about".split()
    )
)
# Abbreviations developers write for words tool descriptions spell out. Applied to queries and
# documents alike, so either spelling matches the other.
_ABBREVIATIONS = {
    "pr": "pull request",
    "prs": "pull requests",
    "mr": "merge request",
    "mrs": "merge requests",
    "repo": "repository",
    "repos": "repositories",
    "k8s": "kubernetes",
    "db": "database",
    "dir": "directory",
    "dirs": "directories",
    "env": "environment",
    "config": "configuration",
    "msg": "message",
    "info": "information",
    "docs": "documentation",
    "doc": "document",
    "img": "image",
    "pic": "picture",
}
# How people ask for things, against the words tool names use (general vocabulary, chosen on the
# tuning sets of tests/corpus/search_queries.json, never per query). Query side only, weighted
# below the words the query really has (_RELATED_BOOST), so an exact word still wins.
_RELATED_GROUPS = (
    ("show", "display", "view", "see", "print", "get", "list"),
    ("fetch", "retrieve", "obtain", "get", "read"),
    ("find", "lookup", "locate", "look", "search", "query"),
    ("remove", "erase", "destroy", "drop", "delete"),
    ("edit", "modify", "change", "alter", "update", "set"),
    ("make", "new", "add", "create", "insert"),
    ("start", "launch", "execute", "trigger", "run", "exec"),
    ("stop", "terminate", "kill", "halt", "cancel"),
    ("rename", "move"),
    ("download", "fetch", "get"),
    ("compute", "calculate", "evaluate", "calc"),
    ("history", "log", "changelog"),
    ("chart", "graph", "plot", "diagram"),
    ("ticket", "bug", "issue"),
    ("browse", "visit", "go", "navigate", "open"),
    ("enable", "disable", "toggle", "turn", "update"),
    ("save", "store", "remember", "write"),
    ("type", "enter", "fill"),
    ("user", "me", "whoami", "profile", "account"),
    ("restart", "start", "rerun"),
    ("folder", "directory"),
    ("image", "picture", "photo", "screenshot"),
    ("repository", "project"),
    ("organization", "org", "group"),
    ("spreadsheet", "workbook", "worksheet", "sheet"),
    ("presentation", "slides", "deck"),
    ("website", "site", "page", "web"),
    ("message", "comment", "note"),
    ("details", "info", "information", "metadata"),
    ("count", "number", "total"),
)

TOKENIZER = "gocode_en"
WORD = re.compile(r"[A-Za-z0-9]+")
_PLURAL_INITIALISM = re.compile(r"(?<![A-Z])[A-Z]{2,}+s")  # linear wherever it is run
# Words of an ASCII identifier at case changes, as names.words splits them (getHTTPResponse →
# get HTTP Response), by one regex: indexing a thousand tools calls it a hundred thousand times.
LOWER_WORD = re.compile(r"(?<![\w.])[a-z][a-z0-9]*(?![\w])")
CASE_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])|[A-Z0-9]+")


@cache
def analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.custom_stopword(STOP_WORDS))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def prepare(text: str) -> str:
    """Text as the index sees it: identifiers split into words, abbreviations spelled out (pure)."""
    out: list[str] = []
    for token in WORD.findall(text):
        # "PRs", "URLs": a plural initialism is one word, not "P" + "Rs".
        for w in [token] if _PLURAL_INITIALISM.fullmatch(token) else CASE_WORD.findall(token):
            low = w.lower()
            out.append(low)
            if low in _ABBREVIATIONS:
                out.append(_ABBREVIATIONS[low])
    return " ".join(out)


@cache
def _related() -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for group in _RELATED_GROUPS:
        for word in group:
            out.setdefault(word, []).extend(w for w in group if w != word and w not in out[word])
    return {w: tuple(ws) for w, ws in out.items()}


def related(word: str) -> tuple[str, ...]:
    """The words the analyser takes as related to ``word`` (lower case, as written)."""
    return _related().get(word, ())


def query_terms(query: str) -> tuple[list[str], list[str]]:
    """A query's own terms (with words run together, "on call" → oncall, as tool names often
    write them) and the related terms it implies, analysed as the index analyses text (pure)."""
    raw = prepare(query).split()
    joined = [a + b for a, b in itertools.pairwise(raw)] + [
        "".join(t) for t in zip(raw, raw[1:], raw[2:], strict=False)
    ]
    own = list(dict.fromkeys(analyzer().analyze(" ".join(raw + joined))))
    related = analyzer().analyze(" ".join(w for r in raw for w in _related().get(r, ())))
    return own, [t for t in dict.fromkeys(related) if t not in own]


# Values a request passes to a tool rather than words for what the tool does: quoted text, URLs,
# identifiers and paths (parse_config, Foo.lean, src/app), issue-style keys (PROJ-142).
VALUE = re.compile(
    r"""(?<!\w)(?:'[^'\n]+'|"[^"\n]+"|`[^`\n]+`|“[^”\n]+”)(?!\w)"""
    r"|\bhttps?://\S+"
    r"|\b\w+(?:[_./]\w+)+\b"
    r"|\b[A-Za-z]+-\d+\b"
)


def split_values(query: str) -> tuple[str, str]:
    """A request without the values it quotes or names (for what it asks), and those values."""
    values = [m.group(0) for m in VALUE.finditer(query)]
    return VALUE.sub(" ", query), " ".join(values)


def first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = re.search(r"(?<=[.!?])\s+(?=[A-Z(\[`\"'])", text)
    return text[: match.start()] if match else text


def fold(name: str) -> str:
    """A name with case and separators folded away: ``get_current_time`` = ``GetCurrentTime``."""
    return "".join(w.lower() for w in words(name))
