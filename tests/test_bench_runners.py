"""bench/runners.py keeps measuring: both runtimes' rows are there, with real figures.

Its timings are for reading (compare the ratios of one run); what is checked holds on any
machine however loaded: each runtime's warm call, CPU per call, build phases and binary size
were measured, and the loopback runtime's binary is the smaller.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.go


def test_bench_runners_prints_both_runtimes() -> None:
    r = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "runners.py"), "--rounds", "1", "--skip-load"],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    rows = {line[:44].strip(): line[44:].split() for line in r.stdout.splitlines() if line[:44].strip()}
    for label in (
        "warm call, new program (median wall)",
        "CPU seconds per call (process tree)",
        "phase: link (median)",
    ):
        sdk, thin = (float(v) for v in re.findall(r"[\d.]+", " ".join(rows[label]))[:2])
        assert sdk > 0 and thin > 0, (label, rows[label])
    sdk_mb, thin_mb = (float(v) for v in re.findall(r"[\d.]+", " ".join(rows["binary size"]))[:2])
    assert thin_mb < sdk_mb / 2
    assert "compile error answer (median build_ms)" in r.stdout
