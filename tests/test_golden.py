"""Golden tests: every corpus file's model view (gocode.view.modelview, what the model reads) and warnings, byte
for byte. After an intended change, rewrite them with ``GOCODE_UPDATE_GOLDENS=1 make test``
and review the diff. The corpus compiling as Go is checked in test_corpus_go.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gocode.schema.builder import build_package
from gocode.view.modelview import render_full
from tests.corpus_data import GOLDEN, corpus_files, corpus_id, load

pytestmark = pytest.mark.fast

UPDATE = os.environ.get("GOCODE_UPDATE_GOLDENS") == "1"


def golden_text(path: Path) -> str:
    pkg = build_package(load(path))
    header = [f"// Declarations for tests/corpus/{path.parent.name}/{path.name} (golden file, generated)."]
    header += [f"// warning: {w!r}" for w in pkg.warnings]
    return "\n".join(header) + "\n\n" + render_full(pkg)


@pytest.mark.parametrize("path", corpus_files(), ids=corpus_id)
def test_golden(path: Path):
    golden = GOLDEN / f"{corpus_id(path)}.go.golden"
    text = golden_text(path)
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert golden.is_file(), f"{golden} is missing: run with GOCODE_UPDATE_GOLDENS=1 to create it"
    assert text == golden.read_text(encoding="utf-8"), f"{path.name} renders differently from {golden.name}"


def test_no_stale_goldens():
    expected = {f"{corpus_id(p)}.go.golden" for p in corpus_files()}
    stale = {p.name for p in GOLDEN.glob("*.golden")} - expected
    assert not stale, f"golden files without a corpus file: {sorted(stale)}"


def test_corpus_is_large_enough():
    # The corpus must cover every mapping row.
    assert len(list(GOLDEN.parent.glob("cases/*.json"))) >= 10
    assert len(list(GOLDEN.parent.glob("real/*.json"))) >= 5
