"""How much of the model view a description shows, within a token budget.

``full`` shows every declaration whatever it costs; ``index`` never does; ``auto`` shows them
all when the description fits ``descriptionTokens``. Below full, the tiers are the index (per
server one line per tool) and, when even that does not fit, the servers with a tool count and
as many names each as fit: that last tier grows with the number of servers, not of tools.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from gocode.schema.ir import Package
from gocode.view import tokens
from gocode.view.modelview import Shapes, render_full, render_index, render_names

Mode = Literal["auto", "full", "index"]
Tier = Literal["full", "index", "names"]


@dataclass(frozen=True)
class Disclosure:
    """The declarations a description shows: ``tier``, the text, and the description as it
    travels (a JSON string), whose :attr:`tokens` are counted when asked for."""

    tier: Tier
    text: str
    wire: str = field(repr=False, compare=False)

    @functools.cached_property
    def tokens(self) -> int:
        """The description's tokens."""
        return tokens.count(self.wire)

    def fits(self, budget: int) -> bool:
        return tokens.at_most(self.wire, budget)

    @property
    def complete(self) -> bool:
        """Whether every tool's full declaration is shown (no search needed)."""
        return self.tier == "full"


def choose(
    pkg: Package,
    mode: Mode,
    budget: int,
    describe: Callable[[str, Tier], str],
    notes: Shapes | None = None,
    about: Mapping[str, str] | None = None,
) -> Disclosure:
    """The most detailed tier whose description (``describe(text, tier)``, counted as the JSON
    string it travels in) fits ``budget``; the names tier shrinks its lists until it fits, and
    is returned even when a bare count per server is still too long. ``notes``: comment lines
    per tool (that it needs approval), in the full and index tiers; ``about``: a note per server
    (its header's), in those tiers too."""

    def attempt(tier: Tier, text: str) -> Disclosure:
        return Disclosure(tier, text, tokens.wire_json(describe(text, tier)))

    if mode == "full" or not pkg.funcs:
        return attempt("full", render_full(pkg, notes, about))
    if mode == "auto":
        full = attempt("full", render_full(pkg, notes, about))
        if full.fits(budget):
            return full
    index = attempt("index", render_index(pkg, notes, about))
    if index.fits(budget):
        return index
    most = max(sum(1 for f in pkg.tool_funcs if f.server == s) for s in {f.server for f in pkg.tool_funcs})
    lo, hi = 0, most  # the largest per-server name count that fits
    best = attempt("names", render_names(pkg, 0))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        got = attempt("names", render_names(pkg, mid))
        if got.fits(budget):
            lo, best = mid, got
        else:
            hi = mid - 1
    return best
