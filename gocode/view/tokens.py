"""Counting tokens as a model's tokenizer does (o200k_base), offline.

bpe-openai bundles the o200k_base vocabulary in its wheel, so nothing is downloaded at run
time. It is imported on first use (about 0.5 s), so commands that never count stay fast.
"""

from __future__ import annotations

import functools
import json
import warnings
from typing import Any

ENCODING = "o200k_base"


@functools.cache
def _tokenizer() -> Any:
    with warnings.catch_warnings():  # bpe-openai 0.1.4 loads its data with a deprecated importlib call
        warnings.simplefilter("ignore", DeprecationWarning)
        from bpe_openai import _bindings  # the public get_encoding API refuses texts over 1 MB

        return _bindings.tokenizer_for_encoding(ENCODING)


def count(text: str) -> int:
    """Tokens in ``text``."""
    return int(_tokenizer().count(text)) if text else 0


def count_json(value: Any) -> int:
    """Tokens in ``value`` as it travels on the wire: compact JSON, strings escaped."""
    return count(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
