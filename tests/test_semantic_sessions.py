"""The search models' optimised graphs, kept on disk so a new query's search does not optimise
them again (gocode/search/semantic.py, open_session): keyed, written whole, and a damaged one
optimised again. The real models (installed by the warm-up) and the real onnxruntime."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest

from gocode.paths import cache_dir
from gocode.search import semantic

installed = pytest.mark.skipif(
    not all(semantic.installed(s) for s in semantic.MODELS), reason="the search models are not installed"
)
TEXTS = ["get_weather: Get current weather data for a location", "list pull requests", "unstage everything I added"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache but for the installed models."""
    shared = cache_dir() / "models"
    monkeypatch.setenv("GOCODE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GOCODE_STATE_DIR", raising=False)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "models").symlink_to(shared)
    return tmp_path / "cache"


def vectors(spec: semantic.ModelSpec, threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    e = semantic.Embedder(spec, threads)
    return e.embed(TEXTS), e.embed(TEXTS[1:2], query=True)


@pytest.mark.fast
def test_the_kept_graph_is_keyed_by_model_onnxruntime_and_machine(tmp_path, monkeypatch):
    monkeypatch.setenv("GOCODE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("GOCODE_STATE_DIR", raising=False)
    spec = semantic.MODEL
    path = semantic.optimized_path(spec, "1.32.0")
    assert path.parent == tmp_path / "search-models" and path.name.startswith(spec.name)
    assert semantic.optimized_path(spec, "1.32.0") == path
    assert semantic.optimized_path(spec, "1.33.0") != path  # another onnxruntime optimises again
    assert semantic.optimized_path(dataclasses.replace(spec, sha256="0" * 64), "1.32.0") != path
    assert semantic.optimized_path(semantic.MINILM, "1.32.0") != path
    monkeypatch.setattr(semantic, "_cpu_identity", lambda: "another CPU")
    assert semantic.optimized_path(spec, "1.32.0") != path


@installed
@pytest.mark.parametrize("spec", semantic.MODELS, ids=lambda s: s.name)
def test_a_kept_graph_gives_the_same_vectors_bit_for_bit(cache, spec):
    import onnxruntime as ort

    kept = semantic.optimized_path(spec, ort.__version__)
    first = vectors(spec)  # optimises, keeps the graph
    assert kept.is_file() and not [p for p in kept.parent.iterdir() if p != kept]  # no temporary left
    stamp = kept.stat().st_mtime_ns
    time.sleep(0.01)
    session = semantic.open_session(ort, spec, 1)
    assert session._model_path == str(kept)  # loaded from the kept graph
    assert kept.stat().st_mtime_ns > stamp  # touched: housekeeping goes by last use
    for threads in (None, 1):  # as a search's child (one thread) and as serve's index (two)
        again = vectors(spec, threads)
        assert np.array_equal(again[0], first[0]) and np.array_equal(again[1], first[1])


@installed
@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_a_damaged_kept_graph_is_optimised_again(cache, damage):
    import onnxruntime as ort

    spec = semantic.MINILM
    first = vectors(spec)
    kept = semantic.optimized_path(spec, ort.__version__)
    whole = kept.read_bytes()
    kept.write_bytes({"garbage": b"not a model" * 100, "truncated": whole[: len(whole) // 2], "empty": b""}[damage])
    again = vectors(spec)
    assert np.array_equal(again[0], first[0]) and np.array_equal(again[1], first[1])
    assert kept.read_bytes() == whole  # written again, whole
    assert semantic.open_session(ort, spec, 1)._model_path == str(kept)


@installed
def test_where_nothing_can_be_kept_every_session_optimises(cache):
    import onnxruntime as ort

    spec = semantic.MINILM
    (cache / "search-models").write_text("a file where the directory would be")
    first = vectors(spec)
    session = semantic.open_session(ort, spec, 1)
    assert session._model_path == str(semantic.model_dir(spec) / "model.onnx")
    assert (cache / "search-models").is_file()
    assert np.array_equal(vectors(spec)[1], first[1])
