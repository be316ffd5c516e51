"""``gocode search`` for a request in several parts: each part with its tools, as
``search_go_tools`` answers it (:func:`gocode.search.answer.by_part`).

Text: ``Your request in N parts:``, then per part its number and words, and its tools ranked a
line each. ``--json``: the single request's document (``query``, ``fits``, ``tools``: every
part's tools, each once) with ``parts``, a list of ``{"query", "fits", "tools"}``, one per part.
A part no tool fits is said on stderr; its nearest tools are still listed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click

from gocode.cli.common import say_error, terminal_text
from gocode.schema.ir import Package
from gocode.search.analysis import first_sentence
from gocode.search.answer import PartAnswer, entry_json
from gocode.search.index import ToolEntry
from gocode.view.modelview import Shapes


def ranked_lines(tools: Sequence[ToolEntry], indent: str = "") -> list[str]:
    """The tools a line each, best first: rank, ``server.tool``, Go function, first sentence."""
    width = max((len(e.qualified) for e in tools), default=0)
    lines = []
    for i, e in enumerate(tools, 1):
        first = first_sentence(e.description)
        lines.append(f"{indent}{i:>2}. {e.qualified:<{width}}  {e.function}" + (f" — {first[:100]}" if first else ""))
    return lines


def _tools(part: PartAnswer) -> tuple[ToolEntry, ...]:
    return (*part.found, *part.more)


def show(query: str, parts: Sequence[PartAnswer], package: Package, shapes: Shapes | None, as_json: bool) -> bool:
    """Print a request's parts with their tools; whether every part has a tool that fits it."""
    fits = [not p.note for p in parts]
    for p in parts:
        if p.note:
            say_error(f"gocode: {p.note.replace('are listed', 'are listed under it')}")
    if as_json:
        every = {e.qualified: e for p in parts for e in _tools(p)}
        doc: dict[str, Any] = {
            "query": query,
            "fits": all(fits),
            "tools": [entry_json(package, e, i, shapes) for i, e in enumerate(every.values(), 1)],
            "parts": [
                {
                    "query": p.text,
                    "fits": ok,
                    "tools": [entry_json(package, e, i, shapes) for i, e in enumerate(_tools(p), 1)],
                }
                for p, ok in zip(parts, fits, strict=True)
            ],
        }
        click.echo(json.dumps(doc))
        return all(fits)
    click.echo(f"Your request in {len(parts)} parts:")
    for n, p in enumerate(parts, 1):
        click.echo(terminal_text(f"{n}. {' '.join(p.text.split())!r}"))
        for line in ranked_lines(_tools(p), "  ") or ["   (no tool matches this part)"]:
            click.echo(terminal_text(line))
    return all(fits)
