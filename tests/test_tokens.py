"""Token counts (gocode/view/tokens.py) from bpe-openai's compiled tokenizer alone."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gocode.schema.builder import build_package
from gocode.view import tokens
from gocode.view.disclosure import choose
from tests.corpus_data import load

ROOT = Path(__file__).resolve().parent.parent
TEXTS = [
    "",
    "hello world",
    "func getWeather(ctx context.Context, in GetWeatherInput) (*Weather, error)",
    "ü∑ 日本語 🙂" * 50,
]


@pytest.mark.fast
@pytest.mark.parametrize("text", TEXTS)
def test_counts_match_the_packages_public_encoding(text: str) -> None:
    counted = tokens.count(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai  # after the bindings are loaded: the package must reuse them

    assert counted == len(bpe_openai.get_encoding(tokens.ENCODING).encode(text))


def test_counting_does_not_run_the_packages_init() -> None:
    # The package's __init__ decodes three vocabularies in Python: most of a second per process.
    probe = "import sys; from gocode.view import tokens; print(tokens.count('a b c'), 'bpe_openai' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["3", "False"]


@pytest.mark.fast
@given(st.text(max_size=300), st.integers(min_value=0, max_value=400))
def test_at_most_answers_as_the_count_does(text: str, budget: int) -> None:
    assert tokens.at_most(text, budget) == (tokens.count(text) <= budget)


@pytest.mark.fast
def test_a_description_shorter_in_bytes_than_the_budget_is_chosen_without_counting(monkeypatch) -> None:
    # A token covers at least a byte: the demo's tools fit without loading the tokenizer
    # (a few tenths of a second in a process that never shows the description).
    pkg = build_package(load(ROOT / "tests" / "corpus" / "real" / "time.json"))
    counted = tokens.count

    def refuse(text: str) -> int:
        raise AssertionError("counted tokens")

    monkeypatch.setattr(tokens, "count", refuse)
    got = choose(pkg, "auto", 100_000, lambda text, tier: "RULES\n" + text)
    assert got.tier == "full"
    monkeypatch.setattr(tokens, "count", counted)
    assert got.tokens == tokens.count_json("RULES\n" + got.text)
