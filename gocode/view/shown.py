"""What a description shows, kept: chosen once per tool set, rules text and approval notes.

The notes differ with who can approve (``gocode serve`` says "Needs approval." to a client it
can ask and that no one can approve to one it cannot), and a description alternates between
them call by call: each stays chosen, so neither is chosen again until the tool set or the
rules change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from gocode.schema.ir import Package
from gocode.view.disclosure import Disclosure

Notes = Mapping[tuple[str, str], Sequence[str]]


class KeptDisclosures:
    """The disclosures chosen for one package and rules text, one per set of notes."""

    def __init__(self) -> None:
        self._for: tuple[Package, str] | None = None
        self._kept: dict[tuple[tuple[tuple[str, str], tuple[str, ...]], ...], Disclosure] = {}

    def get(self, package: Package, head: str, notes: Notes, choose: Callable[[], Disclosure]) -> Disclosure:
        """The disclosure for ``notes``, from ``choose`` the first time (after a new package or rules text)."""
        if self._for is None or self._for[0] is not package or self._for[1] != head:
            self._for, self._kept = (package, head), {}
        key = tuple(sorted((k, tuple(v)) for k, v in notes.items()))
        kept = self._kept  # a new tool set swaps the dict: one chosen for the old one never lands in it
        got = kept.get(key)
        if got is None:
            got = kept[key] = choose()
        return got
