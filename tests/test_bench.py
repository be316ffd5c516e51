"""The benchmark script keeps working (its figures are for reading, so none is asserted here)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.go


def test_bench_prints_the_table_and_the_targets():
    proc = subprocess.run(
        [sys.executable, "bench/run.py", "--runs", "2", "--calls", "50"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    for row in (
        "pooled weather",
        "pooled weather, same code again",
        "pooled weather, same code, sandboxed",
        "sandbox overhead per call",
        "pooled fan-out (20 calls)",
        "direct weather",
        "CPE-style baseline, weather",
        "naive floor (go build + run)",
        "limit (compile + link + run)",
        "classic tool calls, weather",
        "program peak RSS",
        "controller RSS after 50 / 50 calls",
        "first call after start / warm call",
        "8 concurrent calls:                       8/8 ok",
    ):
        assert row in out, row
    assert out.count("] ") >= 6 and "targets:" in out


def test_token_bench_prints_every_corpus_server_and_the_targets():
    proc = subprocess.run(
        [sys.executable, "bench/tokens.py"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    for row in ("filesystem", "gitlab", "common4 (filesystem+git+memory+fetch)", "all corpus servers x2", "targets:"):
        assert row in out, row
