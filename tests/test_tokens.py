"""Token counts (gocode/view/tokens.py) from bpe-openai's compiled tokenizer alone."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from gocode.view import tokens

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
