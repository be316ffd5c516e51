"""Where the Go side ships: ``go_templates/``, ``go.mod.tmpl`` and ``go.sum.tmpl``.

In a built wheel they sit inside the package (``gocode/go_templates``); in a source checkout
(editable install, tests) they sit at the repository top level beside ``gocode/``.
"""

from __future__ import annotations

import functools
from pathlib import Path

_PKG = Path(__file__).resolve().parent


@functools.cache
def data_root() -> Path:
    for root in (_PKG, _PKG.parent):
        if (root / "go_templates").is_dir() and (root / "go.mod.tmpl").is_file():
            return root
    raise FileNotFoundError(f"gocode's Go templates are missing next to {_PKG} (a broken install?)")


def templates_dir() -> Path:
    return data_root() / "go_templates"


def go_mod_template() -> str:
    return (data_root() / "go.mod.tmpl").read_text(encoding="utf-8")


def go_sum_template() -> str:
    return (data_root() / "go.sum.tmpl").read_text(encoding="utf-8")


def package_sources(package: str) -> dict[str, str]:
    """A shipped Go package's files (``go_templates/<package>/*.go``), name → source, in name
    order; its ``_test.go`` files are left out (``go test`` runs them, no built program has them)."""
    files = sorted((templates_dir() / package).glob("*.go"))
    return {p.name: p.read_text(encoding="utf-8") for p in files if not p.name.endswith("_test.go")}


def rt_sources() -> dict[str, str]:
    """The runtime package's files (``go_templates/rt``), name → source, in name order."""
    return package_sources("rt")
