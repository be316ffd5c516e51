"""The soak benchmark keeps working in a reduced run: every answer right, samples printed, and
a growth figure per measure (the figures are for reading, not asserted)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.go


def test_bench_soak_prints_samples_and_growth():
    proc = subprocess.run(
        [sys.executable, "bench/soak.py", "--calls", "12", "--every", "4", "--warmup", "4"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr[-3000:]
    assert "12 calls in " in out and ", 0 failed" in out, out
    assert len(re.findall(r"^calls +\d+  disk ", out, re.M)) == 4, out
    for what in ("disk", "serve RSS", "server RSS"):
        assert re.search(rf"^{what} +[\d.]+ MiB at call 4 -> +[\d.]+ MiB at call 12: [+-][\d.]+ %$", out, re.M), out
