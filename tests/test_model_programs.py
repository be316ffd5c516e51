"""Model-written programs through the real execute_go_code path (Toolbox, demo server).

The corpus (tests/corpus/programs, see tests/model_programs.py) is written the way models
write Go for a tool like this: missing imports from all over the standard library, imports
left unused, whole ``package main`` files, helpers and types around the statements, syntax
and type errors, misnamed tools. Each must run, or fail with its expected message.
"""

from __future__ import annotations

import sys

import pytest

from gocode.blocking import SyncToolbox
from gocode.demo.runner import demo_config
from tests.model_programs import Program, programs

pytestmark = pytest.mark.go

PROGRAMS = programs()


@pytest.fixture(scope="module")
def box(module_cache):
    with SyncToolbox(demo_config(), module_cache=module_cache) as tb:
        yield tb


def test_corpus_is_large_enough():
    assert len(PROGRAMS) >= 60
    assert {p.expect for p in PROGRAMS} == {"ok", "compile", "runtime"}


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.name)
def test_program(box, prog: Program):
    r = box.execute(prog.code)
    problems = prog.problems(r.ok, r.phase, r.output, r.stderr)
    if problems:
        print(r.error_text(), file=sys.stderr)
    assert problems == []
    if r.phase == "compile":  # nothing of the generated program shows in a compile error
        assert "gocode_main.go" not in r.stderr and "gocodetools" not in r.stderr and "tools." not in r.stderr
    if r.phase == "runtime":  # nor in a panic's traceback
        assert "gocode_main.go" not in r.stderr and "gocodews" not in r.stderr
