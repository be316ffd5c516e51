"""The load benchmark keeps working in a reduced run (its figures are for reading; only the
correctness targets are asserted: no lost or wrong answer, the killed replica's calls retried)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.go


def test_bench_load_prints_the_table_and_meets_the_correctness_targets():
    proc = subprocess.run(
        [sys.executable, "bench/load.py", "--calls", "40", "--clients", "6"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr[-3000:]
    for row in ("ok / wrong / lost", "single warm call (median)", "p50 under load", "p99 under load",
                "replica killed", "failed calls at the kill", "gocode1 controller RSS", "targets:"):  # fmt: skip
        assert row in out, out
    assert re.search(r"ok / wrong / lost\s+40 / 0 / 0\n", out), out
    assert "[met] zero lost or wrong answers" in out, out
    assert "[met] only the killed replica's calls failed" in out, out
