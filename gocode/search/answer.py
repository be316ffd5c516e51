"""The ``search_go_tools`` tool: its definition, a request resolved against a
:class:`gocode.search.index.SearchIndex` (names first, then a query's matches), and the answer a
model reads (Go declarations, the next matches one line each, notes)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gocode.errors import SearchRequestError
from gocode.schema.ir import Package
from gocode.search.analysis import first_sentence, fold
from gocode.search.index import NAME_ALL, SearchIndex, ToolEntry
from gocode.search.limits import DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_CHARS
from gocode.toolset import ToolInfo
from gocode.view import tokens
from gocode.view.modelview import Shapes, render_funcs
from gocode.view.rules import SEARCH_TOOL_NAME

# Bounds on what one request may ask for (a model's request is untrusted input).
MAX_NAMES = 50  # and MAX_QUERY_CHARS (gocode.search.limits)
# A search_go_tools answer without an explicit limit leaves out tools scoring below this share of
# the best: on the fresh query sets it returns 3.9 tools instead of 5 (each a full declaration
# the model reads) and finds the intended one in 84.1% of answers instead of 85.1%.
_ANSWER_WITHIN = 0.5
# A search_go_tools answer without an explicit limit: at most this many full declarations, then
# one line each (server, function, first sentence) up to _ANSWER_TOTAL tools, so the intended
# tool is in the answer without a second search while the answer stays short.
_ANSWER_FULL = 3
_ANSWER_TOTAL = 10
# A request in several parts (gocode.search.parts): per part, at most this many in full and in
# all, so an answer in four parts holds no more declarations than two requests.
_PART_FULL = 2
_PART_TOTAL = 5
_LINE_CHARS = 110


SEARCH_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What you want to do, in a few words."},
        "names": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Tool or function names (get_current_time, getCurrentTime, server.tool).",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "description": f"Matches to show in full (default: the best few, then a line each up to {_ANSWER_TOTAL}).",
        },
    },
    "additionalProperties": False,
}


def search_tool_definition() -> dict[str, Any]:
    """``search_go_tools`` as an MCP Tool (wire JSON)."""
    return {
        "name": SEARCH_TOOL_NAME,
        "description": (
            "Find the Go functions execute_go_code can call, with their declarations: a `query` (what you want "
            "to do) for the best matches, or `names` for those tools."
        ),
        "inputSchema": SEARCH_INPUT_SCHEMA,
    }


@dataclass(frozen=True)
class PartAnswer:
    """One part of a request in several parts: its words, the tools found for it (in full, then
    a line each) and, when nothing fits it, a note saying so."""

    text: str
    found: tuple[ToolEntry, ...]
    more: tuple[ToolEntry, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class SearchAnswer:
    """The tools a request found, in order: ``found`` shown as full declarations, ``more`` as
    one line each; and notes (names that matched nothing, a query nothing fits). A query in
    several parts also has ``parts``, each with its own tools (all of them in ``found`` and
    ``more`` too)."""

    found: tuple[ToolEntry, ...]
    notes: tuple[str, ...] = ()
    more: tuple[ToolEntry, ...] = ()
    parts: tuple[PartAnswer, ...] = ()


def missing_note(index: SearchIndex, name: str, elsewhere: str = "search with a `query` saying what it does") -> str:
    """What to say of a name no tool has: the close names, else (a handful of tools) every
    name there is, else ``elsewhere``, how to find a tool by what it does."""
    close = index.suggest(name)
    if close:
        return f"no tool named {name!r}; did you mean {' or '.join(close)}?"
    if not index.entries:
        return f"no tool named {name!r}; there are no tools"
    if len(index.entries) <= NAME_ALL:
        return f"no tool named {name!r} nor one close to it; the tools are: " + ", ".join(
            dict.fromkeys(e.function for e in index.entries)
        )
    return f"no tool named {name!r} nor one close to it; {elsewhere}"


def answer(index: SearchIndex, arguments: dict[str, Any] | None, regular: Iterable[ToolInfo] = ()) -> SearchAnswer:
    """Resolve a search_go_tools request: ``names`` first (in the order given), then the
    query's matches; raises SearchRequestError when there is nothing to answer. ``regular``
    are the tools offered as regular tools, not in Go, so a name of one is told so."""
    offered = {fold(t.name): t for t in regular} | {fold(t.server) + "." + fold(t.name): t for t in regular}
    args = arguments or {}
    unknown = sorted(set(args) - set(SEARCH_INPUT_SCHEMA["properties"]))
    if unknown:
        raise SearchRequestError(f"unknown argument {unknown[0]!r}: give `query` (a string) and/or `names` (a list)")
    query, names, limit = args.get("query"), args.get("names"), args.get("limit", DEFAULT_LIMIT)
    if query is not None and not isinstance(query, str):
        raise SearchRequestError("`query` must be a string")
    if names is not None and (not isinstance(names, list) or not all(isinstance(n, str) for n in names)):
        raise SearchRequestError("`names` must be a list of strings")
    if names is not None and len(names) > MAX_NAMES:
        raise SearchRequestError(f"at most {MAX_NAMES} `names` at once")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise SearchRequestError(f"`limit` must be a positive integer (at most {MAX_LIMIT})")
    query, names = (query or "").strip()[:MAX_QUERY_CHARS], [n[:200] for n in names or [] if n.strip()]
    if not query and not names:
        raise SearchRequestError(
            'give a `query` (what you want to do, e.g. "list open pull requests") or `names` of tools'
        )
    found: dict[str, ToolEntry] = {}
    notes: list[str] = []
    for name in names:
        hits = index.lookup(name)
        if not hits:
            server, _, tool = name.rpartition(".")
            plain = offered.get(fold(name)) or offered.get(fold(server) + "." + fold(tool))
            if plain is not None:
                notes.append(f"{name!r} is not a Go function: call it as a regular tool, not from execute_go_code")
            else:
                notes.append(missing_note(index, name))
        for e in hits:
            found.setdefault(e.qualified, e)
    more: dict[str, ToolEntry] = {}
    explicit = "limit" in args
    if query and limit > MAX_LIMIT:
        notes.append(f"at most {MAX_LIMIT} tools per answer")
    answered = _answered(index, query, min(limit, MAX_LIMIT) if explicit else None) if query else []
    for p in answered:
        notes += [p.note] if p.note and len(answered) == 1 else []
        for e in p.found:
            found.setdefault(e.qualified, e)
        for e in p.more:
            if e.qualified not in found:
                more.setdefault(e.qualified, e)
    if not found and not more:
        raise SearchRequestError("; ".join([*notes, *(p.note for p in answered if len(answered) > 1)]))
    more = {k: e for k, e in more.items() if k not in found}
    parts = tuple(answered) if len(answered) > 1 else ()
    return SearchAnswer(tuple(found.values()), tuple(notes), tuple(more.values()), parts)


def _answered(index: SearchIndex, query: str, limit: int | None) -> list[PartAnswer]:
    """A query's tools: for a request in parts (gocode.search.parts), each part's, searched with
    the servers the request names; else (or when the request's best tool shows up for every
    part: one tool does all it asks) the request's own, as one part."""
    whole = PartAnswer(query, *_matches(index, query, limit))
    asked = index.split(query)
    if len(asked) == 1:
        return [whole]
    answered = []
    for part in asked:
        searched = index.in_context(part, query)
        full, rest, note = _matches(index, searched, limit, _PART_FULL, _PART_TOTAL)
        answered.append(PartAnswer(part, tuple(full), tuple(rest), note.replace(repr(searched), repr(part))))
    best = whole.found[0] if whole.found and not whole.note else None
    if best is not None and all(best in (*p.found, *p.more) for p in answered):
        return [whole]
    return answered


def _matches(
    index: SearchIndex, query: str, limit: int | None, most: int = _ANSWER_FULL, total: int = _ANSWER_TOTAL
) -> tuple[tuple[ToolEntry, ...], tuple[ToolEntry, ...], str]:
    """A query's tools in full and on a line each, and a note when none fits: with ``limit``
    (the model's own), that many in full; else at most ``most`` close to the best in full and
    the rest up to ``total`` on a line each."""
    ranking = index.ranking(query, limit if limit is not None else total)
    scored = list(ranking.scored)
    note = ""
    if not scored:
        note = f"no tool matches {query!r}"
    elif not ranking.fits:
        note = f"no tool fits {query!r}; the nearest are listed"
    if limit is not None:  # the model's own limit is taken as asked, every tool in full
        full, rest = scored, []
    elif not ranking.fits:
        full, rest = [], scored
    else:
        # The best few in full; tools far behind the best, and the tail, one line each.
        top = scored[0][1]
        n = sum(1 for _, score in scored[:most] if score >= _ANSWER_WITHIN * top)
        full, rest = scored[:n], scored[n:]
    return tuple(e for e, _ in full), tuple(e for e, _ in rest), note


def one_line(e: ToolEntry) -> str:
    """A tool in one line: server, Go function and the first sentence of its description."""
    first = first_sentence(e.description)
    if len(first) > _LINE_CHARS:
        first = first[: _LINE_CHARS - 1].rstrip() + "…"
    return f"{e.server}: {e.function}" + (f" — {first}" if first else "")


def answer_text(
    package: Package,
    got: SearchAnswer,
    shapes: Shapes | None = None,
    about: Mapping[str, str] | None = None,
    budget: int | None = None,
) -> str:
    """The Go declarations of the tools found, best first (each type once), the next matches one
    line each, then the notes (``about``: a note per server, under its header). A request in
    parts is answered part by part (:func:`parts_text`), within ``budget`` tokens if it can be."""
    if got.parts:
        return parts_text(package, got, shapes, about, budget)
    found = [e.func for e in got.found]
    text = render_funcs(package, found, ranked=True, shapes=shapes, about=about) if got.found else ""
    if got.more:
        head = "Also matching" if got.found else "Nearest"
        text += f"\n// {head} (ask for `names` to see their declarations):\n"
        text += "".join(f"// {one_line(e)}\n" for e in got.more)
    notes = "".join(f"// {n}\n" for n in got.notes)
    return f"```go\n{text}{notes}```\n"


def entry_json(package: Package, e: ToolEntry, rank: int | None = None, shapes: Shapes | None = None) -> dict[str, Any]:
    """One tool for ``gocode search/describe --json``: where it lives and its full declaration."""
    doc: dict[str, Any] = {"rank": rank} if rank is not None else {}
    return doc | {
        "server": e.server,
        "tool": e.tool,
        "function": e.function,
        "signature": e.signature,
        "description": e.description,
        "declaration": render_funcs(package, [e.func], shapes=shapes),
    }


def parts_text(
    package: Package,
    got: SearchAnswer,
    shapes: Shapes | None = None,
    about: Mapping[str, str] | None = None,
    budget: int | None = None,
) -> str:
    """A request in parts answered part by part: under a heading that quotes the part, its tools
    in full (each type once in the whole answer; a tool an earlier part showed is named), the
    next a line each, or that nothing fits it. Over ``budget`` tokens, the last full
    declarations become lines, one at a time, while any part keeps more than one."""
    parts = list(got.parts)
    while True:
        text = _parts_text(package, got, parts, shapes, about)
        fuller = [i for i, p in enumerate(parts) if len(p.found) > 1]
        if budget is None or not fuller or tokens.at_most(text, budget):
            return text
        i = fuller[-1]
        p = parts[i]
        parts[i] = PartAnswer(p.text, p.found[:-1], (p.found[-1], *p.more), p.note)


def _parts_text(
    package: Package,
    got: SearchAnswer,
    parts: list[PartAnswer],
    shapes: Shapes | None,
    about: Mapping[str, str] | None,
) -> str:
    declared: set[str] = set()
    shown: set[str] = set()
    in_parts = {e.qualified for p in got.parts for e in p.found}
    # Tools asked for by name come first, as in any answer.
    named = [e for e in got.found if e.qualified not in in_parts]
    text = render_funcs(package, [e.func for e in named], ranked=True, shapes=shapes, about=about, declared=declared)
    shown.update(e.qualified for e in named)
    text += f"// Your request in {len(parts)} parts, each with its tools:\n"
    for n, p in enumerate(parts, 1):
        text += f"\n// ----- {n}. {_quoted(p.text)} -----\n"
        if p.note:
            text += f"// {p.note}\n"
        new = [e for e in p.found if e.qualified not in shown]
        earlier = [e.function for e in p.found if e.qualified in shown]
        if earlier:
            text += f"// {', '.join(earlier)}: shown above\n"
        if new:
            text += render_funcs(
                package, [e.func for e in new], ranked=True, shapes=shapes, about=about, declared=declared
            )
        shown.update(e.qualified for e in p.found)
        if p.more:
            head = "Also matching" if p.found else "Nearest"
            text += ("\n" if new else "") + f"// {head} (ask for `names` to see their declarations):\n"
            text += "".join(f"// {one_line(e)}\n" for e in p.more)
    notes = "".join(f"// {n}\n" for n in got.notes)
    return f"```go\n{text}{notes}```\n"


def _quoted(part: str) -> str:
    """A part of the request on one line, cut when long (it is the model's own text)."""
    flat = " ".join(part.split())
    return repr(flat if len(flat) <= _LINE_CHARS else flat[: _LINE_CHARS - 1].rstrip() + "…")


def respond(
    index: SearchIndex,
    package: Package,
    arguments: dict[str, Any] | None,
    regular: Iterable[ToolInfo] = (),
    shapes: Shapes | None = None,
    about: Mapping[str, str] | None = None,
    budget: int | None = None,
) -> tuple[str, bool]:
    """``search_go_tools``' answer to a request: (text, is_error); never raises for bad input."""
    try:
        got = answer(index, arguments, regular)
    except SearchRequestError as exc:
        return f"{SEARCH_TOOL_NAME}: {exc}", True
    return answer_text(package, got, shapes, about, budget), False


def by_part(index: SearchIndex, query: str, limit: int) -> tuple[PartAnswer, ...]:
    """A query's tools part by part, ``limit`` for each, as ``gocode search`` lists them: () for
    a request asking one thing, or one whose best tool does every part (listed as one)."""
    if len(index.split(query)) < 2:  # the split alone: a request in one part is ranked once, as always
        return ()
    got = _answered(index, query, limit)
    return tuple(got) if len(got) > 1 else ()
