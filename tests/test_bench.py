"""The benchmark script keeps measuring: every row has a real figure and the figures are sane.

Its timings are for reading, so no speed target is asserted here; what is checked holds on any
machine however loaded: each scenario was measured (a positive median, a p90 not below it),
a cached binary is faster than a fresh ``go build``, memory figures are real, and the
concurrent calls all completed.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.go

SCENARIOS = (  # at least these; every row present is checked
    "pooled weather",
    "pooled weather, same code again",
    "pooled weather, same code, sandboxed",
    "compile error (type), pooled",
    "syntax error, pooled",
    "pooled fan-out (20 calls)",
    "direct weather",
    "CPE-style baseline, weather",
    "naive floor (go build + run)",
    "limit (compile + link + run)",
    "classic tool calls, weather",
)
ROW = re.compile(r"^\| (?P<name>.+?) +\| +(?P<med>\d+)ms \| +(?P<p90>\d+)ms \|", re.M)


def test_bench_measures_every_scenario():
    proc = subprocess.run(
        [sys.executable, "bench/run.py", "--runs", "2", "--calls", "50"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    rows = {m["name"]: (int(m["med"]), int(m["p90"])) for m in ROW.finditer(out)}
    assert set(SCENARIOS) <= set(rows), out
    for name, (med, p90) in rows.items():
        # A syntax error is answered by the parser alone, in well under a millisecond.
        floor = 0 if name.startswith(("syntax error", "compile error")) else 1
        assert floor <= med <= p90, f"{name}: median {med} ms, p90 {p90} ms"
    assert rows["syntax error, pooled"][0] < rows["pooled weather"][0], out
    assert rows["pooled weather, same code again"][0] < rows["naive floor (go build + run)"][0], out

    def figures(pattern: str) -> list[float]:
        m = re.search(pattern, out, re.M)
        assert m, f"{pattern!r} missing:\n{out}"
        return [float(x) for x in m.groups()]

    assert figures(r"^program peak RSS \(pooled weather\): +(\d+\.\d) MiB$")[0] > 1, out
    assert figures(r"^controller \(gocode serve\) peak RSS: +(\d+\.\d) MiB$")[0] > 10, out
    assert min(figures(r"^controller RSS after 50 / 50 calls: +(\d+\.\d) / (\d+\.\d) MiB")) > 10, out
    assert min(figures(r"^first call after start / warm call: +(\d+) / (\d+) ms$")) > 0, out
    assert re.search(r"^sandbox overhead per call \(same code\): +[+-]\d+ ms$", out, re.M), out
    assert re.search(r"^8 concurrent calls: +8/8 ok in \d+\.\d+ s", out, re.M), out
    targets = re.findall(r"^  \[(met|MISSED)\] (.+): (-?\d+(?:\.\d+)?)$", out, re.M)
    assert len(targets) >= 6, out
    assert ("met", "8 concurrent calls all complete", "8") in targets, out


def test_token_bench_prints_every_corpus_server_and_the_targets():
    proc = subprocess.run(
        [sys.executable, "bench/tokens.py"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    for row in ("filesystem", "gitlab", "common4 (filesystem+git+memory+fetch)", "all corpus servers x2", "targets:"):
        assert row in out, row


def test_token_bench_measures_a_learned_shape_and_the_type_inferred_from_it():
    proc = subprocess.run(
        [sys.executable, "bench/tokens.py", "--shapes"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {m[0]: [int(x) for x in m[1:]] for m in re.findall(r"^(\w+) +(\d+) +(\d+) +(\d+)$", proc.stdout, re.M)}
    assert set(rows) == {"list_commits", "get_issue"}, proc.stdout
    for none, comment, typed in rows.values():
        assert none < comment < typed, proc.stdout  # the type declares what the comment only names
