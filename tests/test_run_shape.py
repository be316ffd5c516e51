"""The run path stays in shape: its phases are the ones documented, and its classes and
functions stay small enough to read (a class at most 400 lines, a function at most 80)."""

from __future__ import annotations

import ast
import re
import typing
from pathlib import Path

import pytest

from gocode.run.result import RETRYABLE_PHASES, Phase

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parent.parent
MAX_CLASS_LINES = 400
MAX_FUNCTION_LINES = 80
# The modules of the run path, whole: a call from the toolbox through its route table's
# handlers and the controller's runs, the supervision and operations beside it, down to the runner.
RUN_PATH = ("gocode/toolbox.py", "gocode/operations.py", "gocode/mcp/supervisor.py", "gocode/serve/elicitation.py",
            "gocode/codemode.py", "gocode/run/runner.py", "gocode/run/sandbox.py", "gocode/run/result.py",
            "gocode/run/reach.py", "gocode/execution.py")  # fmt: skip
# Every module of the route table (gocode/routes/), whole.
ROUTES = "gocode/routes"


def documented_phases() -> list[str]:
    text = (ROOT / "docs/results-and-streaming.md").read_text()
    section = text.split("\n## Phases\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z]+)` \|", section, re.M)


def test_documented_phases_are_the_type() -> None:
    assert documented_phases() == list(typing.get_args(Phase))
    assert set(RETRYABLE_PHASES) <= set(typing.get_args(Phase))


def oversized(path: Path) -> list[str]:
    """Classes over MAX_CLASS_LINES and functions over MAX_FUNCTION_LINES in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        assert node.end_lineno is not None
        lines = node.end_lineno - node.lineno + 1
        limit = MAX_CLASS_LINES if isinstance(node, ast.ClassDef) else MAX_FUNCTION_LINES
        if lines > limit:
            found.append(f"{path.name}: {node.name} has {lines} lines (at most {limit})")
    return found


def test_run_path_sizes() -> None:
    routes = sorted((ROOT / ROUTES).glob("*.py"))
    assert len(routes) > 1  # the route table is where this check looks for it
    found = [p for path in [*(ROOT / name for name in RUN_PATH), *routes] for p in oversized(path)]
    assert found == []


def test_size_check_sees_a_long_function(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "long.py").write_text(f"def long():\n{body}\n\nclass Small:\n    pass\n")
    assert oversized(tmp_path / "long.py") == ["long.py: long has 81 lines (at most 80)"]
