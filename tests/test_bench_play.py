"""The play-through benchmark replays its recorded turns against live servers and counts them.

Its figures are for reading (the targets are printed, not asserted); what is asserted is that
a recorded play replays as it was played, and that a replay whose results no longer match
what a recorded turn assumed is reported and fails the run instead of being counted.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, load_script

bench_play = load_script("bench/play.py", "bench_play")

PLAY_DATA = ROOT / "bench" / "play"


def play(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "bench/play.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )  # fmt: skip


@pytest.mark.go
@pytest.mark.net
def test_one_task_replays_in_both_arms_and_is_counted():
    proc = play("--json", "--tasks", "time-tokyo")
    assert proc.returncode == 0, proc.stderr[-3000:]
    figures = json.loads(proc.stdout)
    assert [t["task"] for t in figures["tasks"]] == ["time-tokyo"]
    task = figures["tasks"][0]
    classic, code = task["classic"], task["code"]
    # classic: the call, then the answer; every request re-sends the definitions
    assert classic["requests"] == 2
    assert classic["input"] == sum(classic["parts"].values())
    assert classic["parts"]["definitions"] > classic["parts"]["results"] > 0
    # code: search_go_tools for the declaration, one program (it builds as the rules show it), the answer
    assert code["requests"] == 3 and code["output"] > 0
    assert task["input_ratio"] == round(code["input"] / classic["input"], 2)
    assert figures["mismatches"] == []
    assert set(figures["targets"]) == {"total_input", "single_call"}


@pytest.mark.go
@pytest.mark.net
def test_a_result_that_no_longer_matches_the_recording_is_reported(tmp_path: Path):
    data = tmp_path / "play"
    shutil.copytree(PLAY_DATA, data)
    path = data / "classic" / "git-status.json"
    recorded = json.loads(path.read_text())
    recorded["turns"][0]["calls"][0]["expect"] = ["modified:   shop/orders.py"]  # not what the repo shows
    path.write_text(json.dumps(recorded))
    proc = play("--data", str(data), "--tasks", "git-status")
    assert proc.returncode == 1, proc.stdout + proc.stderr[-3000:]
    assert "classic/git-status: turn 1 git_status: result lacks 'modified:   shop/orders.py'" in proc.stderr
    assert "code/git-status" not in proc.stderr  # the untouched arm replays as played


def _play(task: str, arm: str, requests: int, tokens: int) -> bench_play.Play:
    parts = {"definitions": tokens - 100, "task": 20, "assistant": 30, "results": 50}
    return bench_play.Play(task, arm, requests, tokens, 10, parts)


def test_the_targets_are_judged_on_the_totals_and_on_every_single_call_task():
    single = {"id": "one", "kind": "single", "prompt": ""}
    chain = {"id": "two", "kind": "chain", "prompt": ""}
    rows = [
        (single, _play("one", "classic", 2, 1000), _play("one", "code", 3, 1150)),
        (chain, _play("two", "classic", 5, 9000), _play("two", "code", 3, 3050)),
    ]
    figures = bench_play.summary(rows)
    assert figures["total"]["input_ratio"] == 0.42  # 4200 / 10000
    assert figures["targets"]["total_input"]["met"] is True
    assert figures["targets"]["single_call"] == {"limit": 1.1, "worst": "one", "ratio": 1.15, "met": False}
    assert figures["total"]["code"]["parts"] == {"definitions": 4000, "task": 40, "assistant": 60, "results": 100}
    text = bench_play.render(figures, markdown=False)
    assert "total input <= 0.7x classic: 4200/10000 = 0.42x  MET" in text
    assert "every single-call task <= 1.1x classic: worst one 1.15x  NOT MET" in text
