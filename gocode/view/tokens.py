"""Counting tokens as a model's tokenizer does (o200k_base), offline.

bpe-openai bundles the o200k_base vocabulary in its wheel, so nothing is downloaded at run
time. Only its compiled tokenizer is loaded, on first use (under 0.1 s): the package's own
``__init__`` decodes three vocabularies in Python for its tiktoken-style metadata (most of a
second), which counting never needs.
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import json
import sys
import warnings
from pathlib import Path
from typing import Any

ENCODING = "o200k_base"
_BINDINGS = "bpe_openai._bindings"


@functools.cache
def _tokenizer() -> Any:
    # The public get_encoding API refuses texts over 1 MB: the bindings count any length.
    return _bindings().tokenizer_for_encoding(ENCODING)


def _bindings() -> Any:
    """bpe-openai's compiled module, loaded without running the package's ``__init__`` (and
    registered, so a later ``import bpe_openai`` uses it instead of initialising it twice)."""
    if (loaded := sys.modules.get(_BINDINGS)) is not None:
        return loaded
    package = importlib.util.find_spec("bpe_openai")  # finds the package without importing it
    for directory in (package.submodule_search_locations or []) if package is not None else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(directory) / f"_bindings{suffix}"
            if path.is_file():
                return _load_extension(path)
    with warnings.catch_warnings():  # bpe-openai 0.1.4 loads its data with a deprecated importlib call
        warnings.simplefilter("ignore", DeprecationWarning)
        from bpe_openai import _bindings

        return _bindings


def _load_extension(path: Path) -> Any:
    loader = importlib.machinery.ExtensionFileLoader(_BINDINGS, str(path))
    spec = importlib.util.spec_from_file_location(_BINDINGS, path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[_BINDINGS] = module
    try:
        loader.exec_module(module)
    except BaseException:
        del sys.modules[_BINDINGS]
        raise
    return module


def count(text: str) -> int:
    """Tokens in ``text``."""
    return int(_tokenizer().count(text)) if text else 0


def wire_json(value: Any) -> str:
    """``value`` as it travels on the wire: compact JSON, strings escaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def count_json(value: Any) -> int:
    """Tokens in ``value`` as it travels on the wire (:func:`wire_json`)."""
    return count(wire_json(value))


def at_most(text: str, budget: int) -> bool:
    """Whether ``text`` takes at most ``budget`` tokens. A token covers at least one byte, so a
    text of no more bytes than that is answered without loading the tokenizer."""
    return len(text.encode()) <= budget or count(text) <= budget
