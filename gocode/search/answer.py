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
class SearchAnswer:
    """The tools a request found, in order: ``found`` shown as full declarations, ``more`` as
    one line each; and notes (names that matched nothing, a query nothing fits)."""

    found: tuple[ToolEntry, ...]
    notes: tuple[str, ...] = ()
    more: tuple[ToolEntry, ...] = ()


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
    if query:
        explicit = "limit" in args
        ranking = index.ranking(query, min(limit, MAX_LIMIT) if explicit else _ANSWER_TOTAL)
        scored = list(ranking.scored)
        if limit > MAX_LIMIT:
            notes.append(f"at most {MAX_LIMIT} tools per answer")
        if not scored:
            notes.append(f"no tool matches {query!r}")
        elif not ranking.fits:
            notes.append(f"no tool fits {query!r}; the nearest are listed")
        if explicit:  # the model's own limit is taken as asked, every tool in full
            full, rest = scored, []
        elif not ranking.fits:
            full, rest = [], scored
        else:
            # The best few in full; tools far behind the best, and the tail, one line each.
            top = scored[0][1]
            n = sum(1 for _, score in scored[:_ANSWER_FULL] if score >= _ANSWER_WITHIN * top)
            full, rest = scored[:n], scored[n:]
        for e, _ in full:
            found.setdefault(e.qualified, e)
        for e, _ in rest:
            if e.qualified not in found:
                more.setdefault(e.qualified, e)
    if not found and not more:
        raise SearchRequestError("; ".join(notes))
    return SearchAnswer(tuple(found.values()), tuple(notes), tuple(more.values()))


def one_line(e: ToolEntry) -> str:
    """A tool in one line: server, Go function and the first sentence of its description."""
    first = first_sentence(e.description)
    if len(first) > _LINE_CHARS:
        first = first[: _LINE_CHARS - 1].rstrip() + "…"
    return f"{e.server}: {e.function}" + (f" — {first}" if first else "")


def answer_text(
    package: Package, got: SearchAnswer, shapes: Shapes | None = None, about: Mapping[str, str] | None = None
) -> str:
    """The Go declarations of the tools found, best first (each type once), the next matches one
    line each, then the notes (``about``: a note per server, under its header)."""
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
