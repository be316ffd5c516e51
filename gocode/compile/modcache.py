"""The Go module cache: toolchain detection, warm-up, and builds.

Layout under the cache directory (``$GOCODE_CACHE_DIR``, else ``$XDG_CACHE_HOME/gocode``,
else ``~/.cache/gocode``)::

    toolchains/            the official Go, fetched when the machine has none (gofetch.py)
    go-build/              GOCACHE, shared by every module cache
    gomod/                 GOMODCACHE (Go's own module downloads)
    ws-<key>/              one module per (Go version, go.mod.tmpl, go.sum.tmpl, runtime source)
        go.mod go.sum      from the shipped templates; the SDK version is pinned there
        rt/*.go            the runtime package (go_templates/rt)
        tools/t<digest>/   one bindings package per tool set, written once, compiled once
        runs/<id>/main.go  one directory per run, removed afterwards
        bin/<hash>         built programs, reused when the same code meets the same tool set
        .ready             written when warm-up finished

With ``$GOCODE_STATE_DIR`` set, the cache may be shared read-only (several replicas, an image
layer): ``runs/`` and ``bin/`` then live in ``$GOCODE_STATE_DIR/ws-<key>/``, and so do the
bindings of a tool set the cache was not warmed with; ``go`` sees them at their module paths
through ``-overlay``. Go tolerates a read-only ``GOCACHE`` (it only skips storing new entries),
so a tool set warmed into the cache builds as fast as before.

The module cache owns its directory and the lock file ``ws-<key>.lock``; nothing else writes
there. Builds use ``-trimpath`` (so a package's directory is not part of its build-cache key)
and ``GOPROXY=off`` (after warm-up no run touches the network). Safe for concurrent runs and
processes: per-run directories, atomic writes, and a file lock around warm-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gocode.compile import gofetch, golink, runners
from gocode.compile.budget import Budget
from gocode.compile.runners import SDK, Runner
from gocode.errors import BuildTimeout, CheckTimeout, ToolchainError
from gocode.files import write_file
from gocode.paths import cache_dir, state_dir
from gocode.program.code import ModelCode, Prepared
from gocode.program.diagnostics import Diagnostic, parse_diagnostics
from gocode.program.messages import explain, scrub
from gocode.program.plan import Plan, plan_from_answer
from gocode.program.render import main_names, render_bindings, render_main, tools_import_path
from gocode.program.typecheck import GoFix
from gocode.resources import go_mod_template, go_sum_template, rt_sources
from gocode.schema.ir import Package
from gocode.schema.stdlib import STDLIB

MIN_GO = (1, 25)
# Part of the module cache key: bump it when warm-up must do more (2: the whole std for direct builds).
MODCACHE_LAYOUT = "2"
# Written when the whole standard library is compiled (in the background after the first set-up).
STD_MARK = ".std"
FIRST_BUILD_NOTE = "first time only: 27–41 s on an idle 2-core machine, 150–230 s on a busy one"
BUILD_FLAGS = ("-trimpath", "-ldflags=-s -w", "-buildvcs=false")
# `go list -export` compiles what it lists: with the flags of the builds (the link flags aside),
# so it finds the packages they compiled in the build cache instead of compiling them again.
LIST_FLAGS = ("-trimpath", "-buildvcs=false")
MAX_CACHED_BINARIES = 64
HEARTBEAT_S = 10.0  # seconds between the lines that say a long set-up step is still going
# GOCODE_BUILD=go turns the direct compile-and-link path off (every build uses `go build`).
DIRECT_BUILDS = os.environ.get("GOCODE_BUILD", "direct") != "go"
INSTALL_HINT = (
    "install Go 1.25 or newer from https://go.dev/dl/ and make sure `go` is on PATH (or set GOCODE_GO); "
    f"without one, gocode downloads Go {gofetch.GO_VERSION} through the Go module proxy"
)

Progress = Callable[[str], None]

# One Go parser helper per module cache directory, shared by every ModuleCache object on it.
_GOFIX: dict[Path, GoFix] = {}
_GOFIX_LOCK = threading.Lock()
_FETCH_LOCK = threading.Lock()  # one download per process (gofetch's file lock: one per machine)


def write_module_files(root: Path, rt_files: dict[str, str]) -> None:
    """Write a bindings module's go.mod, go.sum and runtime package under ``root``."""
    (root / "rt").mkdir(parents=True, exist_ok=True)
    write_file(root / "go.mod", go_mod_template())
    write_file(root / "go.sum", go_sum_template())
    for name, text in rt_files.items():
        write_file(root / "rt" / name, text)


def write_bindings_module(root: Path, pkg: Package) -> Path:
    """Write a standalone bindings module for ``pkg`` (module files and its tools package); returns the tools dir."""
    write_module_files(root, rt_sources())
    tools_dir = root / tools_import_path(pkg).removeprefix("gocodews/")
    tools_dir.mkdir(parents=True, exist_ok=True)
    write_file(tools_dir / "tools.go", render_bindings(pkg))
    return tools_dir


@dataclass(frozen=True)
class Toolchain:
    go: str
    version: str  # e.g. "go1.26.8"

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return _parse_version(self.version)


def _parse_version(v: str) -> tuple[int, ...]:
    m = re.match(r"go(\d+)\.(\d+)(?:\.(\d+))?", v)
    return tuple(int(x) for x in m.groups(default="0")) if m else (0,)


def find_toolchain(progress: Progress | None = None, *, fetch: bool = True) -> Toolchain:
    """The ``go`` command to use: $GOCODE_GO, else Go 1.25 or newer on PATH, else the official
    toolchain fetched into the cache (:mod:`gocode.compile.gofetch`; downloaded only with ``fetch``
    and not with ``GOTOOLCHAIN=local``). Raises :class:`ToolchainError` when there is none (saying
    why: absent, too old, not fetchable)."""
    if chosen := os.environ.get("GOCODE_GO"):
        return _checked(chosen)  # the user's own choice: used as it is, or an error
    found = shutil.which("go")
    why = f"the Go toolchain was not found: {INSTALL_HINT}"
    if found:
        try:
            return _checked(found)
        except ToolchainError as exc:
            why = str(exc)
    if (fetched := gofetch.cached_go(cache_dir())) is not None:
        return _checked(str(fetched))
    if os.environ.get("GOTOOLCHAIN") == "local":
        raise ToolchainError(f"{why} (GOTOOLCHAIN=local: gocode does not download Go {gofetch.GO_VERSION})")
    if not fetch:
        raise ToolchainError(why)
    go = gofetch.fetched_go(cache_dir(), progress or _say_on_stderr)
    return _checked(str(go))


def _toolchain_or_pending() -> tuple[Toolchain, bool]:
    """The toolchain to use and whether it is still to be fetched (see :func:`find_toolchain`)."""
    try:
        return find_toolchain(fetch=False), False
    except ToolchainError:
        if os.environ.get("GOCODE_GO") or os.environ.get("GOTOOLCHAIN") == "local":
            raise
        gofetch.goenv.proxies()  # an environment that forbids the download says so now
        root = cache_dir() / gofetch.TOOLCHAINS_DIR / f"go{gofetch.GO_VERSION}.{gofetch.platform_name()}"
        return Toolchain(str(root / "bin" / "go"), f"go{gofetch.GO_VERSION}"), True


def _say_on_stderr(msg: str) -> None:
    # Before any command has a progress line of its own; stdout may be an MCP channel.
    print(f"gocode: {msg}", file=sys.stderr, flush=True)


def _checked(go: str) -> Toolchain:
    try:
        out = subprocess.run(
            [go, "env", "GOVERSION"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "GOTOOLCHAIN": "local"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolchainError(f"cannot run {go}: {exc}; {INSTALL_HINT}") from None
    version = out.stdout.strip()
    if out.returncode != 0 or not version.startswith("go"):
        raise ToolchainError(f"`{go} env GOVERSION` failed: {out.stderr.strip() or out.stdout.strip()}; {INSTALL_HINT}")
    tc = Toolchain(go, version)
    if tc.version_tuple[:2] < MIN_GO:
        raise ToolchainError(
            f"{go} is {version}, but gocode needs Go 1.25 or newer (the MCP Go SDK requires it): {INSTALL_HINT}"
        )
    return tc


@dataclass(frozen=True)
class BuildResult:
    ok: bool
    binary: Path | None
    output: str  # the compiler's messages, with the package header line removed
    duration_ms: float
    cached: bool = False
    # How it was built: "direct" (compile + link), "go build", "go build (fallback)" (the direct
    # path failed for a reason not in the model's code), "cached", or "checked" (rejected by the
    # type check before any compile), or "stopped" (it outlasted its run's timeout).
    mode: str = "go build"
    notes: tuple[str, ...] = ()  # what was changed in the model's code (an unused import removed, …)
    diagnostics: tuple[Diagnostic, ...] = ()  # the errors, at the model's positions
    plan: Plan | None = None  # the tools the program can call (None: it did not type-check)
    runner: Runner = SDK  # the runtime it is linked with (gocode.compile.runners)
    timed_out: float | None = None  # the limit its build outlasted (see gocode.compile.budget), if it did


class ModuleCache:
    """A module cache for one toolchain; see the module doc. Share one per process."""

    fallbacks = 0  # builds the direct path could not do for a reason outside the model's code

    def __init__(
        self, toolchain: Toolchain | None = None, root: Path | None = None, *, direct: bool | None = None
    ) -> None:
        self.direct_builds = DIRECT_BUILDS if direct is None else direct
        # On a machine without Go, the toolchain gocode fetches: its version is known now (and is
        # all the key needs); it is downloaded by the set-up (warmup/ensure, in a worker thread,
        # with its progress), or on first use of `toolchain`, never while this object is made.
        self._toolchain, self._fetch = (toolchain, False) if toolchain else _toolchain_or_pending()
        self.cache = root or cache_dir()
        rt_files = rt_sources()
        key = hashlib.sha256(
            "\0".join(
                [
                    MODCACHE_LAYOUT,
                    self._toolchain.version,
                    go_mod_template(),
                    go_sum_template(),
                    *(f"{n}\0{t}" for n, t in rt_files.items()),
                ]
            ).encode()
        ).hexdigest()[:12]
        self.dir = self.cache / f"ws-{key}"
        state = state_dir()
        self.state = state / self.dir.name if state else self.dir
        self._overlay: dict[str, str] = {}  # module path -> file in the state dir (read-only cache only)
        self._homes: dict[str, Path] = {}  # import path -> the directory holding its bindings
        self._rt_files = rt_files
        self._bindings: dict[str, str] = {}  # import path -> sha256 of its source
        # (import path, runner) -> its direct-build config
        self._direct: dict[tuple[str, Runner], golink.DirectConfig | None] = {}
        # Per event loop (an asyncio lock belongs to the loop that first waits on it), then per path.
        self._direct_locks: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[tuple[str, Runner], asyncio.Lock]
        ] = weakref.WeakKeyDictionary()
        self._gotooldir: Path | None = None
        self._std_started = False
        self._std_proc: subprocess.Popen[bytes] | None = None
        self._partial: set[tuple[str, Runner]] = set()  # importcfgs listed before std was compiled

    @property
    def toolchain(self) -> Toolchain:
        """The ``go`` command (fetched first, on a machine without Go, if the set-up has not)."""
        self.fetch_go()
        return self._toolchain

    @property
    def go_version(self) -> str:
        """``go1.26.8``: the toolchain's version, known without fetching it."""
        return self._toolchain.version

    def fetch_go(self, progress: Progress | None = None) -> None:
        """Download the toolchain this module cache is for, when the machine has none (once)."""
        if self._fetch:
            with _FETCH_LOCK:
                if self._fetch:
                    go = gofetch.fetched_go(cache_dir(), progress or _say_on_stderr)
                    self._toolchain = _checked(str(go))
                    self._fetch = False

    # --- environment -------------------------------------------------------------------------

    def go_env(self, *, offline: bool = True) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GOCODE_")}
        env.update(
            GOCACHE=str(self.cache / "go-build"),
            GOMODCACHE=str(self.cache / "gomod"),
            GOTOOLCHAIN="local",  # never download a different toolchain because of the go directive
            GOWORK="off",
            GOFLAGS="-mod=readonly -modcacherw",
            CGO_ENABLED="0",  # no C compiler needed, and the same build whatever the host has
            GO111MODULE="on",
        )
        if offline:
            env["GOPROXY"] = "off"
        if self.state != self.dir and not os.access(self.cache / "go-build", os.W_OK):
            # go's package index lives in GOCACHE and, unlike build outputs, a failed write of a
            # new entry fails the build: on a read-only cache, load packages without it.
            env["GODEBUG"] = ",".join(filter(None, [env.get("GODEBUG", ""), "goindex=0"]))
        return env

    @property
    def ready(self) -> bool:
        return (self.dir / ".ready").is_file()

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        self.cache.mkdir(parents=True, exist_ok=True)
        with open(self.cache / f"{self.dir.name}.lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    # --- warm-up -----------------------------------------------------------------------------

    @property
    def std_ready(self) -> bool:
        """Whether the whole standard library is compiled (direct builds then list all of it)."""
        return (self.dir / STD_MARK).is_file()

    def warmup(self, progress: Progress | None = None, force: bool = False, *, full: bool = False) -> None:
        """Download the SDK and pre-compile it with every auto-imported package (network once).

        That is what a first call needs; the rest of the standard library is compiled by a
        detached background process afterwards (see :mod:`gocode.compile.stdbuild`), or here
        with ``full`` (``gocode warmup``: an image or a shared cache is complete when it ends).
        """
        say = progress or (lambda _msg: None)
        self.fetch_go(say)
        with self._lock():
            if self.ready and not force:
                self.gofix.binary()  # built here once per version of its source
                if full:
                    self._build_std(say)
                say(f"module cache ready: {self.dir}")
                return
            start = time.monotonic()
            self.dir.mkdir(parents=True, exist_ok=True)
            (self.dir / STD_MARK).unlink(missing_ok=True)
            write_module_files(self.dir, self._rt_files)
            seed = self.dir / "seed"
            seed.mkdir(exist_ok=True)
            write_file(seed / "main.go", _seed_main())
            say(f"[1/2] downloading the MCP Go SDK and its modules ({self.go_version}) …")
            self._run_go(
                ["mod", "download", "github.com/modelcontextprotocol/go-sdk"],
                offline=False,
                what="downloading modules",
                beat=say,
            )
            say(f"[2/2] compiling the Go SDK, the packages programs use and Go's type checker ({FIRST_BUILD_NOTE}) …")
            # One go build for both, so the toolchain keeps every core busy compiling their packages.
            helper = "./" + self.gofix.source_dir().relative_to(self.dir).as_posix()
            self._run_go(["build", *BUILD_FLAGS, "./seed", helper], offline=False, what="pre-building", beat=say)
            for sub in ("tools", "runs", "bin"):
                (self.dir / sub).mkdir(exist_ok=True)
            self.gofix.binary()  # only links now
            (self.dir / ".ready").write_text(self.go_version + "\n")
            if full:
                self._build_std(say)
            say(f"module cache ready in {time.monotonic() - start:.1f} s: {self.dir}")

    def _build_std(self, say: Progress) -> None:
        if self.std_ready:
            return
        say("compiling the rest of the standard library, for direct builds …")
        self._run_go(
            ["list", *LIST_FLAGS, "-export", "-deps", "-f", "{{.ImportPath}}", "std"],
            offline=True,
            what="pre-building std",
        )
        write_file(self.dir / STD_MARK, "ok\n")

    def ensure(self, progress: Progress | None = None) -> None:
        self.fetch_go(progress)
        if not self.ready:
            self.warmup(progress)
        self.gofix.binary()  # Go's parser and type checker, built once from the shipped source

    def build_std_in_background(self) -> None:
        """Start compiling the rest of the standard library in a detached, low-priority process
        (once per process; it outlives this one, and two processes never both run it). Called
        after a build, so it never competes with the compile a first call waits for."""
        # GOCODE_STD_BACKGROUND=0: never (the standard library is then compiled by `gocode warmup`).
        if self._std_started or os.environ.get("GOCODE_STD_BACKGROUND") == "0" or self.std_ready:
            return
        self._std_started = True
        if not os.access(self.dir, os.W_OK) or not os.access(self.cache / "go-build", os.W_OK):
            return  # a read-only shared cache: `gocode warmup` made it complete, or it stays as it is
        script = Path(__file__).with_name("stdbuild.py")
        with contextlib.suppress(OSError):
            self._std_proc = subprocess.Popen(
                [sys.executable, "-I", str(script), self.toolchain.go, str(self.dir), str(self.dir / STD_MARK)],
                cwd=self.dir,
                env=self.go_env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # not killed with this process's group, nor by Ctrl-C
            )

    def _run_go(self, args: list[str], *, offline: bool, what: str, beat: Progress | None = None) -> None:
        """Run ``go``; ``beat`` hears how long it has taken every :data:`HEARTBEAT_S` seconds (from
        this thread: a progress callback may only be called where the warm-up runs)."""
        start = time.monotonic()
        with subprocess.Popen(
            [self.toolchain.go, *args],
            cwd=self.dir,
            env=self.go_env(offline=offline),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as running:
            while True:
                try:
                    stdout, stderr = running.communicate(timeout=HEARTBEAT_S)
                    break
                except subprocess.TimeoutExpired:  # nothing lost: communicate() is called again
                    if beat is not None:
                        beat(f"  … still {what}: {time.monotonic() - start:.0f} s")
        proc = subprocess.CompletedProcess(running.args, running.returncode, stdout, stderr)
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip()
            hint = ""
            if "proxy" in detail or "dial tcp" in detail or "GOPROXY" in detail:
                hint = (
                    "\n(the Go module proxy must be reachable for the first warm-up; set GOPROXY if you use a mirror)"
                )
            raise ToolchainError(f"{what} failed (`go {' '.join(args)}` in {self.dir}):\n{detail}{hint}")

    # --- bindings and builds -----------------------------------------------------------------

    def ensure_bindings(self, pkg: Package) -> tuple[str, str]:
        """Write the bindings package of a tool set (once); returns its import path and source hash."""
        path = tools_import_path(pkg)
        if path in self._bindings:
            return path, self._bindings[path]
        rel = path.removeprefix("gocodews/")
        d = self.dir / rel
        target = d / "tools.go"
        src = render_bindings(pkg)
        if not target.is_file() or target.read_text(encoding="utf-8") != src:
            try:
                d.mkdir(parents=True, exist_ok=True)
                write_file(target, src)
            except OSError:
                if self.state == self.dir:
                    raise
                # A read-only shared cache without this tool set: keep it in the state dir.
                d = self.state / rel
                d.mkdir(parents=True, exist_ok=True)
                write_file(d / "tools.go", src)
                self._overlay[str(target)] = str(d / "tools.go")
        self._homes[path] = d
        self._bindings[path] = hashlib.sha256(src.encode()).hexdigest()
        return path, self._bindings[path]

    def _overlay_args(self, extra: dict[str, str] | None = None) -> list[str]:
        """``-overlay FILE`` for the files kept in the state dir, or nothing if there are none."""
        files = {**self._overlay, **(extra or {})}
        if not files:
            return []
        doc = json.dumps({"Replace": files}, sort_keys=True)
        path = self.state / f"overlay-{hashlib.sha256(doc.encode()).hexdigest()[:16]}.json"
        if not path.is_file():
            write_file(path, doc)
        return ["-overlay", str(path)]

    @property
    def gofix(self) -> GoFix:
        """The Go parser helper of this module cache (started on first use)."""
        with _GOFIX_LOCK:
            helper = _GOFIX.get(self.dir)
            if helper is None:
                helper = _GOFIX[self.dir] = GoFix(self.toolchain.go, self.dir, self.go_env())
        return helper

    async def prepare(
        self, pkg: Package, code: ModelCode, filename: str = "model.go", runner: Runner = SDK,
        budget: Budget | None = None,
    ) -> Prepared:  # fmt: skip
        """Parse the model's code with Go's grammar: hoist, fix imports by symbol, or say why not
        (within ``budget``, the run's; what the tool set shares is outside it)."""
        budget = budget or Budget()
        direct = await self.direct_config(pkg, runner) if self.direct_builds else None
        importcfg = direct.importcfg if direct is not None else await self._std_importcfg()
        # Until the whole standard library is compiled, the importcfg lacks part of it.
        known = "" if self.std_ready else str(await self._std_names() or "")
        request = {
            "op": "prepare",
            "code": code.source,
            "filename": filename,
            "predeclared": main_names(pkg),
            "importcfg": str(importcfg or ""),
            "known": known,
        }
        return Prepared.from_answer(await budget.bound(self.gofix.call(request, budget.left())))

    async def _check(
        self, pkg: Package, main_src: str, runner: Runner = SDK, budget: Budget | None = None
    ) -> tuple[dict[str, Any], golink.DirectConfig | None]:
        """The type-check helper's answer for a rendered ``main.go`` (against the direct build's
        export data when there is one), and that direct configuration. The runners' APIs are
        one source, so either's export data gives the same answer: the one the program links with."""
        budget = budget or Budget()
        direct = await self.direct_config(pkg, runner) if self.direct_builds else None
        request = {
            "op": "check",
            "src": main_src,
            "importcfg": str(direct.importcfg) if direct is not None else "",
            "lang": direct.lang if direct is not None else "",
        }
        return await budget.bound(self.gofix.call(request, budget.left())), direct

    async def plan(self, pkg: Package, code: ModelCode, filename: str = "model.go") -> BuildResult:
        """Check the program and say which tools it can call, without compiling anything
        (``ok`` False with the errors when it does not type-check)."""
        start = time.monotonic()
        self.ensure_bindings(pkg)
        prepared = await self.prepare(pkg, code, filename)
        if prepared.errors:
            return self._failed(prepared, prepared.errors, start, "checked", pkg, code)
        main_src = render_main(pkg, prepared, filename)
        checked, _ = await self._check(pkg, main_src)
        errors = Prepared.from_answer(checked).errors
        if errors and not any(e.message.startswith("could not import ") for e in errors):
            return self._failed(prepared, errors, start, "checked", pkg, code)
        plan = plan_from_answer(checked.get("plan"), pkg, checked.get("derefs"))
        return BuildResult(
            True, None, "", (time.monotonic() - start) * 1000, mode="checked", notes=prepared.notes, plan=plan
        )

    async def schemas(
        self, pkg: Package, code: ModelCode, names: Sequence[str], filename: str = "model.go"
    ) -> dict[str, Any]:
        """The JSON Schemas of the package-level types ``names`` that ``code`` declares, read
        from their declarations by the type checker (``go_templates/gofix/schema.go``): nothing
        of the program runs. A name it does not declare is missing from the answer; raises
        :class:`ValueError` with the reason when the code cannot be checked."""
        self.ensure_bindings(pkg)
        prepared = await self.prepare(pkg, code, filename)
        if prepared.errors:
            raise ValueError(explain(prepared.errors, pkg, code.source))
        # The tool set's export data, also when builds go through `go build`: the types the
        # declarations use must be known, or their schemas would be guesses.
        direct = await self.direct_config(pkg)
        if direct is None:
            raise ValueError("the tool set's compiled bindings are not available to the type checker")
        checked = await self.gofix.call(
            {
                "op": "check",
                "src": render_main(pkg, prepared, filename),
                "importcfg": str(direct.importcfg),
                "lang": direct.lang,
                "schemas": list(names),
            }
        )
        errors = Prepared.from_answer(checked).errors
        if errors and all(e.message.startswith("could not import ") for e in errors) and not self.std_ready:
            raise ValueError("the standard library is still being compiled (gocode warmup does it); try again shortly")
        if errors:
            raise ValueError(explain(errors, pkg, code.source))
        found = checked.get("schemas")
        return found if isinstance(found, dict) else {}

    async def build(
        self, pkg: Package, code: ModelCode, filename: str = "model.go", runner: Runner = SDK,
        on_linking: Callable[[Plan], None] | None = None, timeout: float | None = None,
    ) -> BuildResult:  # fmt: skip
        """Compile one program; identical source on the same tool set reuses the last binary.

        The model's code is parsed and type-checked first (by the Go helper), so code that
        cannot compile is answered after one check, without the compiler. What type-checks is
        compiled and linked directly when the tool set's importcfg is ready (see
        :mod:`gocode.compile.golink`); only a failure that is not the model's (a trimmed build cache)
        falls back to ``go build``, counted in :attr:`fallbacks` and shown as the build mode.
        ``runner``: the runtime the run wants (:mod:`gocode.compile.runners`; a program that could
        tell the loopback one apart gets the SDK's). ``on_linking`` learns the plan of code that
        type-checked and is about to be compiled and linked (not of a cached binary's): what a
        caller can do meanwhile (:mod:`gocode.run.launching`). ``timeout``: how long the program's
        own steps may take in all (:mod:`gocode.compile.budget`); past it the build is stopped,
        nothing of it left running, and the result's ``timed_out`` is that limit.
        """
        start = time.monotonic()
        _, bindings_hash = self.ensure_bindings(pkg)
        try:
            return await self._build(pkg, code, filename, bindings_hash, start, runner, on_linking, Budget(timeout))
        except CheckTimeout as exc:
            return BuildResult(False, None, str(exc), (time.monotonic() - start) * 1000, mode="checked", runner=runner)
        except BuildTimeout as exc:
            took = (time.monotonic() - start) * 1000
            return BuildResult(False, None, str(exc), took, mode="stopped", runner=runner, timed_out=exc.limit)
        finally:
            if self.ready:
                self.build_std_in_background()

    async def _build(
        self, pkg: Package, code: ModelCode, filename: str, bindings_hash: str, start: float, runner: Runner,
        on_linking: Callable[[Plan], None] | None, budget: Budget,
    ) -> BuildResult:  # fmt: skip
        prepared = await self.prepare(pkg, code, filename, runner, budget)
        runner = runners.runner_for(runner, (i.path for i in prepared.imports))
        if prepared.errors:
            return self._failed(prepared, prepared.errors, start, "checked", pkg, code, runner=runner)
        main_src = render_main(pkg, prepared, filename)
        # The bindings' source (not just the tool set) is in the key: a newer gocode renders
        # differently; and the runner, when it is not the SDK's.
        key = bindings_hash + "\0" + main_src + ("" if runner == SDK else "\0" + runner)
        digest = hashlib.sha256(key.encode()).hexdigest()[:24]
        cached = self.state / "bin" / digest
        # Checked on every path (a cached binary too): the answer carries the plan.
        checked, direct = await self._check(pkg, main_src, runner, budget)
        main_src = checked.get("src") or main_src  # as the helper fixed it (go_templates/gofix/ptrfix.go)
        plan = plan_from_answer(checked.get("plan"), pkg, checked.get("derefs"))
        if cached.is_file():
            with contextlib.suppress(OSError):
                os.utime(cached)
            return BuildResult(
                True, cached, "", (time.monotonic() - start) * 1000, cached=True, mode="cached", notes=prepared.notes,
                plan=plan, runner=runner,
            )  # fmt: skip
        fallback = False
        if direct is not None:
            errors = Prepared.from_answer(checked).errors
            if not code.source.strip():
                # The empty program is the warm-up build: load what most programs import too.
                common = sorted(path for path, _ in STDLIB.values())
                await self.gofix.call({"op": "preload", "predeclared": common, "importcfg": str(direct.importcfg)})
                for other in runners.RUNNERS:  # and list each runner's export data, once per tool set
                    await self.direct_config(pkg, other)
            if any(e.message.startswith("could not import ") for e in errors):
                # A package the listing lacks (the standard library is not all compiled yet), or
                # export data listed for this tool set is gone (a trimmed build cache): not the
                # model's error. Only the latter needs a new listing.
                if (tools_import_path(pkg), runner) not in self._partial:
                    self.forget_direct(pkg)
                direct, fallback = None, True
            elif errors:
                return self._failed(prepared, errors, start, "checked", pkg, code, runner=runner)
        if on_linking is not None:
            on_linking(plan)
        run_id = uuid.uuid4().hex[:12]
        run_dir = self.state / "runs" / f"r{run_id}"
        run_dir.mkdir(parents=True)
        try:
            write_file(run_dir / "main.go", main_src)
            out_path = run_dir / "prog"
            ok = False
            if direct is not None:
                ok, messages = await budget.bound(golink.build(direct, run_dir, out_path, self.go_env()))
                if not ok and f"{filename}:" in messages:
                    # The compiler found what the type checker did not: that is the answer.
                    diags = parse_diagnostics(_clean_build_output(messages, run_id))
                    return self._failed(prepared, diags, start, "direct", pkg, code, raw=messages, runner=runner)
                if not ok:
                    # Not the model's code: the build cache may have been trimmed; list again next time.
                    self.forget_direct(pkg)
                    fallback = True
            mode = "direct" if ok else "go build (fallback)" if fallback else "go build"
            text = ""
            if not ok:
                if fallback:
                    self.fallbacks += 1
                moved = {}
                if self.state != self.dir:  # the run's source is in the state dir: show go its module path
                    moved[str(self.dir / "runs" / f"r{run_id}" / "main.go")] = str(run_dir / "main.go")
                overlay = self._overlay_args(moved)
                tags = runners.tag_args(runner)
                argv = [
                    self.toolchain.go,
                    "build",
                    *BUILD_FLAGS,
                    *tags,
                    *overlay,
                    "-o",
                    str(out_path),
                    f"./runs/r{run_id}",
                ]
                rc, text = await budget.bound(golink.run(argv, cwd=self.dir, env=self.go_env()))
                text = _clean_build_output(text, run_id)
                if rc != 0:
                    diags = parse_diagnostics(text)
                    return self._failed(prepared, diags, start, mode, pkg, code, raw=text, runner=runner)
            cached.parent.mkdir(parents=True, exist_ok=True)
            out_path.replace(cached)
            self._prune_binaries()
            return BuildResult(
                True, cached, text, (time.monotonic() - start) * 1000, mode=mode, notes=prepared.notes, plan=plan,
                runner=runner,
            )  # fmt: skip
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)

    def _failed(
        self,
        prepared: Prepared,
        diags: Sequence[Diagnostic],
        start: float,
        mode: str,
        pkg: Package,
        code: ModelCode,
        raw: str = "",
        runner: Runner = SDK,
    ) -> BuildResult:
        text = explain(diags, pkg, code.source) if diags else scrub(raw)
        cleaned = tuple(dataclasses.replace(d, message=scrub(d.message)) for d in diags)
        return BuildResult(
            False,
            None,
            text,
            (time.monotonic() - start) * 1000,
            mode=mode,
            notes=prepared.notes,
            diagnostics=cleaned,
            runner=runner,
        )

    async def _std_names(self) -> Path | None:
        """The standard library's import paths, one per line (``go list std``: nothing compiled)."""
        path = self.dir / "std.list"
        if path.is_file():
            return path
        argv = [self.toolchain.go, "list", "-f", "{{.ImportPath}}", "std"]
        rc, text = await golink.run(argv, cwd=self.dir, env=self.go_env())
        if rc != 0:
            return None
        write_file(path, text)
        return path

    async def _std_importcfg(self) -> Path | None:
        """The standard library's export data (for builds without the direct path), listed once;
        until the whole of it is compiled, that of the packages the warm-up compiled."""
        whole = self.std_ready
        path = self.dir / ("std.importcfg" if whole else "seed.importcfg")
        if path.is_file():
            return path
        fmt = "{{.ImportPath}}\t{{.Export}}\t"
        patterns = ["std" if whole else "./seed", "golang.org/x/sync/errgroup"]
        argv = [self.toolchain.go, "list", *LIST_FLAGS, "-export", "-deps", "-f", fmt, *patterns]
        rc, text = await golink.run(argv, cwd=self.dir, env=self.go_env())
        if rc != 0:
            return None
        write_file(path, golink.importcfg_text(golink.parse_exports(text)[0]))
        return path

    async def direct_config(self, pkg: Package, runner: Runner = SDK) -> golink.DirectConfig | None:
        """The importcfg of a tool set for a runner (computed once: ``go list -export``), or None if unavailable."""
        key = (tools_import_path(pkg), runner)
        if key in self._partial and self.std_ready:
            self._direct.pop(key, None)  # list again, now with the whole standard library
        if key in self._direct:
            return self._direct[key]
        lock = self._direct_locks.setdefault(asyncio.get_running_loop(), {}).setdefault(key, asyncio.Lock())
        async with lock:
            if key not in self._direct:
                _, bindings_hash = self.ensure_bindings(pkg)
                self._direct[key] = await self._compute_direct(key[0], bindings_hash, runner)
        return self._direct[key]

    def _direct_file(self, tools_path: str, name: str, runner: Runner) -> Path:
        """A file of a tool set's direct builds for a runner (the SDK's keep their old names)."""
        home = self._homes.get(tools_path, self.dir / tools_path.removeprefix("gocodews/"))
        stem, dot, ext = name.partition(".")
        return home / (name if runner == SDK else f"{stem}-{runner}{dot}{ext}")

    async def _compute_direct(self, tools_path: str, bindings_hash: str, runner: Runner) -> golink.DirectConfig | None:
        # Kept on disk next to the bindings, so one-shot processes (gocode exec) reuse it too; only
        # for the same bindings source: another gocode version renders the same tool set differently,
        # and export data of the old source would make the type check answer for the wrong package.
        saved = self._direct_file(tools_path, "direct.json", runner)
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            doc = json.loads(saved.read_text())
            kept = golink.DirectConfig(
                Path(doc["compile"]), Path(doc["link"]), Path(doc["importcfg"]), doc["lang"], doc["godebug"]
            )
            # A listing made before the standard library was compiled is replaced once it is.
            whole = doc.get("std", True) or not self.std_ready
            if doc.get("bindings") == bindings_hash and kept.importcfg.is_file() and whole:
                self._note_partial((tools_path, runner), bool(doc.get("std", True)))
                return kept
        whole = self.std_ready
        cfg = await self._list_direct(tools_path, whole, runner)
        if cfg is not None:
            self._note_partial((tools_path, runner), whole)
            doc = {k: str(v) for k, v in dataclasses.asdict(cfg).items()} | {"bindings": bindings_hash, "std": whole}
            with contextlib.suppress(OSError):  # only a shortcut for the next process
                write_file(saved, json.dumps(doc))
        return cfg

    def _note_partial(self, key: tuple[str, Runner], whole: bool) -> None:
        if whole:
            self._partial.discard(key)
        else:
            self._partial.add(key)

    def forget_direct(self, pkg: Package) -> None:
        """Drop a tool set's direct-build configs (after one failed), so the next build lists again."""
        path = tools_import_path(pkg)
        for runner in runners.RUNNERS:
            self._direct.pop((path, runner), None)
            with contextlib.suppress(OSError):
                self._direct_file(path, "direct.json", runner).unlink(missing_ok=True)

    async def _list_direct(self, tools_path: str, whole_std: bool, runner: Runner) -> golink.DirectConfig | None:
        fmt = "{{.ImportPath}}\t{{.Export}}\t{{.DefaultGODEBUG}}"
        # Without the whole standard library: what the runtime, the auto-imported packages and
        # the bindings import (compiled already); a program importing more falls back to go build.
        std = ["std"] if whole_std else []
        patterns = [*std, "./rt", "./seed", "./" + tools_path.removeprefix("gocodews/")]
        flags = [*LIST_FLAGS, *runners.tag_args(runner), *self._overlay_args()]
        argv = [self.toolchain.go, "list", *flags, "-export", "-deps", "-f", fmt, *patterns]
        code, text = await golink.run(argv, cwd=self.dir, env=self.go_env())
        if code != 0:
            # e.g. bindings that do not compile (go build reports it properly), or new bindings
            # on a read-only cache (go build then compiles them on each build)
            return None
        exports, godebug = golink.parse_exports(text)
        cfg_path = self._direct_file(tools_path, "importcfg", runner)
        try:
            write_file(cfg_path, golink.importcfg_text(exports))
        except OSError:
            if self.state == self.dir:
                raise
            # A read-only shared cache warmed for the other runner only: keep it in the state dir.
            cfg_path = self.state / cfg_path.relative_to(self.dir)
            cfg_path.parent.mkdir(parents=True, exist_ok=True)
            write_file(cfg_path, golink.importcfg_text(exports))
        tooldir = await self._tooldir()
        if tooldir is None:
            return None
        lang = golink.module_lang(go_mod_template())
        return golink.DirectConfig(tooldir / "compile", tooldir / "link", cfg_path, lang, godebug)

    async def _tooldir(self) -> Path | None:
        if self._gotooldir is None:
            code, text = await golink.run([self.toolchain.go, "env", "GOTOOLDIR"], cwd=self.dir, env=self.go_env())
            d = Path(text.strip())
            self._gotooldir = d if code == 0 and (d / "compile").is_file() and (d / "link").is_file() else Path()
        return self._gotooldir if self._gotooldir != Path() else None

    def _prune_binaries(self) -> None:
        bins = sorted((self.state / "bin").iterdir(), key=lambda p: p.stat().st_mtime if p.exists() else 0)
        for old in bins[:-MAX_CACHED_BINARIES]:
            old.unlink(missing_ok=True)


async def check_and_build(
    module_cache: ModuleCache, pkg: Package, code: ModelCode, progress: Progress | None = None, runner: Runner = SDK,
    on_linking: Callable[[Plan], None] | None = None, timeout: float | None = None,
) -> BuildResult:  # fmt: skip
    """The build step of a run: the module cache set up (the first time, ``progress`` told), then
    ``code`` checked against ``pkg`` and built for ``runner`` (``on_linking`` and ``timeout``, the
    bound of the program's own steps only: see :meth:`ModuleCache.build`)."""
    if not module_cache.ready:
        await asyncio.to_thread(module_cache.ensure, progress)
    return await module_cache.build(pkg, code, runner=runner, on_linking=on_linking, timeout=timeout)


def _clean_build_output(text: str, run_id: str) -> str:
    lines = [ln for ln in text.splitlines() if not ln.startswith("# gocodews/runs/")]
    return "\n".join(ln.replace(f"runs/r{run_id}/", "") for ln in lines).strip()


def _seed_main() -> str:
    """A program importing the runtime and every auto-importable package, so warm-up compiles them all."""
    imports = "\n".join(f'\t"{path}"' for path, _ in sorted(STDLIB.values()))
    guards = "\n".join(sorted(g for _, g in STDLIB.values()))
    return (
        "// Code generated by gocode. DO NOT EDIT.\n\n// The warm-up program: it only makes the build cache hot.\npackage main\n\n"
        f'import (\n\t"context"\n\n{imports}\n\n\tgocodert "gocodews/rt"\n)\n\n{guards}\n\n'
        "func main() {\n\tgocodert.Main(func(context.Context) error { return nil })\n}\n"
    )
