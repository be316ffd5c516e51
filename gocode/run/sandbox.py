"""The sandbox: what the host supports, which tier a setting gets, and how a run is confined.

``codeMode.sandbox`` per model:

- ``auto`` (default): the strongest tier this host supports, unconfined only where none exists;
  the tier in force is in the tool description and in every result;
- ``off``: the program runs with the user's rights (in a scrubbed environment);
- ``on``: the strongest tier this host supports, or an error (the program does not run);
- ``strict``: the network-namespace tier, or an error;
- ``best-effort``: whatever exists, the downgrade stated in every result.

Tiers, strongest first: ``netns`` (a private user+network namespace whose only reachable
endpoint is the controller, plus everything below), ``landlock`` (Landlock ABI ≥ 4 + seccomp
+ rlimits: files only in scratch, TCP only to the controller's port, no processes), and for
``best-effort`` only, ``landlock-fs`` (ABI 1–3: no network rule) and ``seccomp-only``.
docs/sandbox.md has the guarantees.

The confinement itself happens in a small launcher (go_templates/launcher), built here from
the shipped source with CGO_ENABLED=0, that confines itself and then execs the program.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import pwd
import shutil
import tempfile
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gocode.compile import golink
from gocode.compile.modcache import ModuleCache
from gocode.config import DEFAULT_UID_RANGE, CodeModeConfig, SandboxLimits, uid_range
from gocode.errors import GocodeError, SandboxError
from gocode.files import write_file
from gocode.resources import package_sources
from gocode.run import hostprobe, owned
from gocode.run import workdir as workdirs
from gocode.run.cgroups import run_cgroups
from gocode.run.env import sandboxed_env
from gocode.run.workdir import WORKSPACE_ENV

MIN_ABI = 4  # TCP port rules
NOBODY = 65534
# codeMode.limits.threads caps a run's processes and threads: as its cgroup's pids.max where
# the host allows (gocode.run.cgroups), and as RLIMIT_NPROC of a program run as another user.
# The kernel counts RLIMIT_NPROC over all of that user's threads on the host, so each run gets
# a user of its own (codeMode.limits.uidRange); only when none is free, or the range is not
# mapped here, do runs share nobody, and then that limit. Run users own nothing but a run's
# scratch; a uid an account has is skipped.
RUN_UIDS = uid_range(DEFAULT_UID_RANGE)
READ_ONLY = ("/usr/share/zoneinfo",)  # time.LoadLocation; nothing else outside scratch is readable
# Tests of unsupported hosts: make the probe (and the launcher) report less than the kernel has.
FAKE_ABI_ENV = "GOCODE_SANDBOX_FAKE_ABI"
FAKE_NO_USERNS_ENV = "GOCODE_SANDBOX_FAKE_NOUSERNS"


@dataclass(frozen=True)
class HostSupport:
    landlock_abi: int
    seccomp: bool
    user_namespaces: bool
    uid: int
    kernel: str
    arch: str
    user_namespaces_error: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "landlockAbi": self.landlock_abi,
            "seccomp": self.seccomp,
            "userNamespaces": self.user_namespaces,
            "userNamespacesError": self.user_namespaces_error,
            "uid": self.uid,
            "kernel": self.kernel,
            "arch": self.arch,
        }


@dataclass(frozen=True)
class Decision:
    """The tier a setting gets on a host, or why it gets none."""

    setting: str
    tier: str | None  # None: no sandbox (off, or refused)
    min_abi: int = MIN_ABI
    error: str = ""
    warning: str = ""  # a downgrade from what was asked for: shown with the program's output
    note: str = ""  # why ``auto`` got less than the strongest tier (stated in the result's _meta)


def decide(setting: str, host: HostSupport) -> Decision:
    """Which tier a ``codeMode.sandbox`` setting gets on this host (pure)."""
    if setting == "off":
        return Decision(setting, None)
    if not host.seccomp:
        no_landlock = no_netns = "seccomp filters are not available (a kernel without CONFIG_SECCOMP_FILTER, or gVisor)"
    else:
        have = f"Landlock ABI {host.landlock_abi}" if host.landlock_abi else "no Landlock"
        no_landlock = (
            f"{have} on kernel {host.kernel}: TCP port rules need ABI {MIN_ABI} or newer "
            "(Linux 6.7+ with landlock in the lsm= boot parameter)"
            if host.landlock_abi < MIN_ABI
            else ""
        )
        if not host.user_namespaces:
            no_netns = (
                f"unprivileged user namespaces are not available ({host.user_namespaces_error or 'disabled'}; "
                "Ubuntu 24.04+ restricts them with kernel.apparmor_restrict_unprivileged_userns, Docker's default "
                "seccomp profile blocks them)"
            )
        elif host.landlock_abi < 1:
            no_netns = f"no Landlock on kernel {host.kernel} (files cannot be confined)"
        else:
            no_netns = ""
    if setting == "strict":
        if no_netns:
            return Decision(setting, None, error=f"`sandbox: strict` needs the network-namespace tier: {no_netns}.")
        return Decision(setting, "netns", min_abi=1)
    if setting == "on":
        if not no_netns:
            return Decision(setting, "netns", min_abi=1)
        if not no_landlock:
            return Decision(setting, "landlock")
        return Decision(
            setting,
            None,
            error=f"`sandbox: on` was requested but this host cannot confine programs: {no_landlock}; and {no_netns}. "
            "Use a newer kernel, or set `sandbox: best-effort` (weaker, stated in every result) or `off`.",
        )
    if setting == "auto":
        # The default: the strongest tier that exists, without a warning in the output (nothing
        # stronger was asked for); the tier is in the description and in every result.
        best = decide("best-effort", host)
        return Decision(setting, best.tier, best.min_abi, note=best.warning.removeprefix("sandbox best-effort: "))
    # best-effort: the strongest that exists, the downgrade stated
    if not no_netns:
        return Decision(setting, "netns", min_abi=1)
    if not no_landlock:
        return Decision(
            setting, "landlock", warning=f"sandbox best-effort: landlock tier (no private network: {no_netns})"
        )
    if not host.seccomp:
        return Decision(setting, None, warning=f"sandbox best-effort: NOT confined: {no_landlock}")
    tier = "landlock-fs" if host.landlock_abi > 0 else "seccomp-only"
    return Decision(setting, tier, min_abi=0, warning=f"sandbox best-effort: downgraded to {tier}: {no_landlock}")


class Launcher:
    """The launcher binary for a module cache: built once from the shipped source, cached by its hash."""

    def __init__(self, modcache: ModuleCache) -> None:
        self.modcache = modcache
        self._path: Path | None = None
        self._host: HostSupport | None = None
        self._host_fake: tuple[str | None, str | None] = (None, None)
        # One lock per event loop: an asyncio lock belongs to the loop that first waits on it,
        # and this launcher is shared by every loop of the process (a SyncToolbox runs its own).
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()

    async def path(self) -> Path:
        async with self._locks.setdefault(asyncio.get_running_loop(), asyncio.Lock()):
            if self._path is None or not self._path.is_file():
                self._path = await self._build()
        return self._path

    def _sources(self) -> tuple[dict[str, str], Path]:
        """The launcher's shipped source files, and the binary built from them."""
        sources = package_sources("launcher")
        digest = hashlib.sha256(json.dumps(sources, sort_keys=True).encode()).hexdigest()[:16]
        # Not in bin/: that directory keeps only the newest programs.
        return sources, self.modcache.dir / "launcher" / f"launcher-{digest}"

    @property
    def built(self) -> bool:
        """Whether the launcher of the shipped source is built (a first run builds it)."""
        return (self._path is not None and self._path.is_file()) or self._sources()[1].is_file()

    async def _build(self) -> Path:
        sources, binary = self._sources()
        ws = self.modcache
        if binary.is_file():
            return binary
        if not ws.ready:
            await asyncio.to_thread(ws.ensure)
        src = ws.dir / "launcher"
        src.mkdir(parents=True, exist_ok=True)
        for old in src.glob("*.go"):
            old.unlink()
        for name, text in sources.items():
            write_file(src / name, text)
        tmp = src / f".{binary.name}-{os.getpid()}-{threading.get_ident()}"  # loops on threads may build at once
        code, out = await golink.run(
            [ws.toolchain.go, "build", "-trimpath", "-buildvcs=false", "-o", str(tmp), "./launcher"],
            cwd=ws.dir,
            env=ws.go_env(),  # CGO_ENABLED=0: a static binary
        )
        if code != 0:
            raise SandboxError(f"building the sandbox launcher failed:\n{out}")
        tmp.replace(binary)
        return binary

    async def probe(self) -> HostSupport:
        """What the host supports (asked once per process, of the launcher itself)."""
        fake = _fakes()
        if self._host is None or self._host_fake != fake:
            self._host_fake = fake
            argv = [str(await self.path()), "-probe"]
            if fake[0] is not None:
                argv += ["-fake-abi", fake[0]]
            code, out = await golink.run(argv, cwd=self.modcache.dir, env=os.environ)
            try:
                doc = json.loads(out.strip().splitlines()[-1])
            except (ValueError, IndexError):
                raise SandboxError(f"the sandbox probe failed (exit {code}): {out.strip()}") from None
            self._host = _host_support(doc, fake[1])
        return self._host

    async def quick_probe(self) -> HostSupport:
        """What the host supports, without building anything: the launcher's answer when it is
        built (or was asked), else the kernel's, asked from Python (:mod:`gocode.run.hostprobe`),
        so a cold machine's first definitions need not wait for the set-up. Where Python cannot
        ask, the launcher is built and asked."""
        fake = _fakes()
        if (self._host is not None and self._host_fake == fake) or self.built:
            return await self.probe()
        try:
            fake_abi = int(fake[0]) if fake[0] is not None else None
        except ValueError:
            fake_abi = None
        doc = await asyncio.to_thread(hostprobe.probe, fake_abi)
        if doc is None:
            return await self.probe()
        return _host_support(doc, fake[1])


def _fakes() -> tuple[str | None, str | None]:
    """The test-only overrides of what the host supports (a Landlock ABI, no user namespaces)."""
    return os.environ.get(FAKE_ABI_ENV), os.environ.get(FAKE_NO_USERNS_ENV)


def _host_support(doc: dict[str, Any], fake_no_userns: str | None) -> HostSupport:
    """A probe's JSON document (the launcher's, or :func:`gocode.run.hostprobe.probe`'s)."""
    return HostSupport(
        landlock_abi=int(doc["landlockAbi"]),
        seccomp=bool(doc["seccomp"]),
        user_namespaces=bool(doc["userNamespaces"]) and not fake_no_userns,
        user_namespaces_error="(faked for a test)" if fake_no_userns else str(doc.get("userNamespacesError", "")),
        uid=int(doc["uid"]),
        kernel=str(doc["kernel"]),
        arch=str(doc["arch"]),
    )


class UidPool:
    """Hands out the run users, one per running program, from the range each run's settings
    name (thread-safe: runs may come from several event loops; one busy set for every range,
    so overlapping ranges of two models never hand out one uid twice).

    Every gocode process on the host draws from the same default range (replicas, a serve
    beside a one-off exec), so each uid is also claimed host-wide with ``flock`` on a file
    named for it in ``lock_dir``: two processes never run programs as one user, whose shared
    RLIMIT_NPROC would let one run starve the other. The kernel drops a claim when its holder
    dies, so a crash leaks nothing."""

    def __init__(self, lock_dir: Path | None = None) -> None:
        self._busy: dict[int, int | None] = {}  # uid -> descriptor holding its claim
        self._lock = threading.Lock()
        self._usable: dict[range, bool] = {}
        self._lock_dir = lock_dir

    def usable(self, uids: range = RUN_UIDS) -> bool:
        """Whether the range is mapped in this user namespace (a rootless container maps few)."""
        if uids not in self._usable:
            self._usable[uids] = _mapped(uids)
        return self._usable[uids]

    def acquire(self, uids: range = RUN_UIDS) -> int:
        """A free run user, or nobody (shared) when there is none."""
        if not self.usable(uids):
            return NOBODY
        with self._lock:
            for uid in uids:
                if uid in self._busy or _is_account(uid):
                    continue
                claimed, fd = self._claim(uid)
                if claimed:
                    self._busy[uid] = fd
                    return uid
        return NOBODY

    def release(self, uid: int) -> None:
        with self._lock:
            fd = self._busy.pop(uid, None)
        if fd is not None:
            os.close(fd)  # closing the descriptor drops the flock

    def _claim(self, uid: int) -> tuple[bool, int | None]:
        """(claimed, descriptor): the host-wide claim on ``uid``; without a usable lock
        directory the claim is this process's alone (claimed, no descriptor)."""
        directory = self._lock_dir or uid_lock_dir()
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(directory / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            return True, None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False, None
        return True, fd


def uid_lock_dir() -> Path:
    """Where gocode processes on this host claim run users: ``$GOCODE_UID_LOCKS``, else
    ``/run/gocode/uids`` (only root hands out other users, and /run is root's), else a
    directory in the temporary directory."""
    if env := os.environ.get("GOCODE_UID_LOCKS"):
        return Path(env)
    run = Path("/run")
    if os.access(run, os.W_OK):
        return run / "gocode" / "uids"
    return Path(tempfile.gettempdir()) / f"gocode-uids-{os.geteuid()}"


def _mapped(uids: range) -> bool:
    try:
        lines = Path("/proc/self/uid_map").read_text().splitlines()
    except OSError:
        return False
    for line in lines:
        inside, _outside, count = (int(x) for x in line.split())
        if inside <= uids.start and uids.stop <= inside + count:
            return True
    return False


def _is_account(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


run_uids = UidPool()


@dataclass
class Confinement:
    """How one run is started under the sandbox."""

    argv_prefix: list[str]  # the launcher and its flags, up to "--"
    env: dict[str, str]
    scratch: Path
    scratch_limit: int  # bytes
    decision: Decision
    limits: dict[str, int] = field(default_factory=dict)
    run_dir: Path | None = None  # removed after the run (holds scratch and the program's copy)
    program: Path | None = None  # the copy the launcher execs
    netns: bool = False  # the launcher hands back a listener in the program's namespace to serve
    port: int = 0  # the controller's loopback port, which that listener forwards to
    endpoint: asyncio.Future[None] | None = None  # the task serving that listener during the run
    uid: int | None = None  # the run user from run_uids, given back by release()
    cwd: Path | None = None  # where the program starts (its workspace), else scratch
    cwd_limit: int | None = None  # the workspace's cap (bytes), watched like scratch; 0 is a cap too
    cwd_group: int | None = None  # the model's group, when runs of other users share the workspace
    shrink_only: bool = False  # the workspace is over its cap: the program may only read and delete there
    cgroup: Path | None = None  # the run's pids cgroup, removed by close()
    threads: int = 0  # codeMode.limits.threads (0: no per-run limit applies)
    # What confine() claimed for this run (its user, its cgroup, its run directory), given
    # back by close(), last claimed first.
    claims: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def close(self) -> None:
        """Removes the run directory, the run's cgroup and gives its user back; call it once the
        program is gone (its user must not be handed to another run while it lives). Synchronous,
        so a cancelled caller cannot interrupt it; closing twice does nothing."""
        self.claims.close()

    async def aclose(self) -> None:
        """:meth:`close` in a worker thread, run to its end even when the caller is cancelled."""
        await owned.release(self.close)


_launchers: dict[Path, Launcher] = {}


def launcher_for(modcache: ModuleCache) -> Launcher:
    if modcache.dir not in _launchers:
        _launchers[modcache.dir] = Launcher(modcache)
    return _launchers[modcache.dir]


async def confine(
    modcache: ModuleCache,
    settings: CodeModeConfig,
    port: int,
    servers_json: str,
    timeout: float,
    workdir: Path | None = None,
    *,
    shrink_only: bool = False,
) -> Confinement | Decision:
    """The confinement for one run, or the decision to run unconfined (``best-effort`` with nothing
    to offer: its warning goes into the result); raises :class:`SandboxError` when refused.

    ``workdir`` (the model's workspace) is the one directory besides scratch the program may
    write, and where it starts; with ``shrink_only`` (it is at or over its cap) the program may
    only read and delete there, which the kernel enforces. The program is put in its run
    directory afterwards (:func:`place_program`): the launcher may be started before it is built."""
    launcher = launcher_for(modcache)
    decision = decide(settings.sandbox, await launcher.probe())
    if decision.error:
        raise SandboxError(decision.error)
    if decision.tier is None:
        return decision
    lim = settings.limits
    data = lim.memory_mb << 20
    limits = {
        # A second past the timeout: CPU time counts the launcher's set-up and the Go runtime's
        # own threads, so a busy loop reached a limit equal to the timeout first as often as not
        # on an idle machine, and its timeout read as a SIGKILL.
        "cpu": lim.cpu_seconds or int(timeout + 0.999) + 1,
        "data": data,
        # Generous: Go reserves much more address space than it uses (1 GiB of headroom failed
        # ~5% of MCP programs at start); the ceiling only stops MAP_SHARED getting round DATA.
        "as": (lim.address_space_mb << 20) if lim.address_space_mb else data + (4096 << 20),
        "fsize": lim.file_size_mb << 20,
        "nofile": lim.open_files,
    }
    as_nobody = lim.user == "nobody" or (lim.user == "auto" and os.geteuid() == 0)
    if as_nobody and os.geteuid() != 0:
        raise SandboxError("codeMode.limits.user: nobody needs gocode to run as root (it switches users)")
    launcher_path = await launcher.path()
    # Each claim is registered for release the moment it is made: whatever ends the set-up (an
    # error, the caller cancelled) gives back everything claimed so far.
    with contextlib.ExitStack() as claims:
        uid = run_uids.acquire(lim.uids) if as_nobody else None
        if uid is not None and uid != NOBODY:
            claims.callback(run_uids.release, uid)
        cgroup = await owned.claim(lambda: run_cgroups.create(lim.threads), _remove_cgroup)
        if cgroup is not None:
            claims.callback(run_cgroups.remove, cgroup)
        made: str = await owned.claim(lambda: _mkrundir(launcher_path, uid), _remove_tree)
        run_dir = Path(made)
        claims.callback(shutil.rmtree, run_dir, True)
        confinement = await _confinement(
            settings, decision, limits, launcher_path, run_dir, uid, cgroup, port, servers_json, workdir, shrink_only
        )
        confinement.claims = claims.pop_all()
        return confinement


async def probe_state(module_cache: ModuleCache, setting: str, *, quick: bool) -> dict[str, Any]:
    """The tier ``setting`` gets on this host, with a ``note`` on why (never raises: a host that
    cannot tell gets none). ``quick``: ask the kernel from Python, building nothing; else the
    launcher itself (built, with the module cache, if need be)."""
    state: dict[str, Any] = {"setting": setting, "tier": None}
    if setting != "off":
        try:
            launcher = launcher_for(module_cache)
            if not quick and not launcher.built and not module_cache.ready:
                await asyncio.to_thread(module_cache.ensure)
            decision = decide(setting, await (launcher.quick_probe() if quick else launcher.probe()))
            state.update(tier=decision.tier)
            if decision.note or decision.error or decision.warning:
                state["note"] = decision.note or decision.error or decision.warning
        except (GocodeError, OSError) as exc:
            state["note"] = f"the sandbox could not be set up here: {exc}"
    return state


# What a result says of a program that ran without the sandbox: the setting and why.
Unconfined = dict[str, Any]
DIRECT_REFUSAL = (
    "the sandbox needs pooled sessions (the loopback endpoint is a sandboxed program's only door): use gocode "
    "serve, the Toolbox API or gocode exec without --direct"
)


def unconfined(decision: Decision) -> Unconfined:
    """The result's ``sandbox`` entry for a run the decision leaves unconfined."""
    note: Unconfined = {"tier": None, "setting": decision.setting}
    if decision.warning:
        note["warning"] = decision.warning
    if decision.note:
        note["note"] = decision.note
    return note


async def confine_pooled(
    module_cache: ModuleCache,
    settings: CodeModeConfig,
    port: int,
    servers_json: str,
    timeout: float,
    workdir: Path | None,
    *,
    shrink_only: bool = False,
) -> Confinement | Unconfined:
    """The confine step of a program that reaches its tools through the controller's loopback
    ``port``: its confinement, or why it runs without one; raises :class:`SandboxError` when refused."""
    if settings.sandbox == "off":
        return {"setting": "off", "tier": None}
    got = await confine(module_cache, settings, port, servers_json, timeout, workdir, shrink_only=shrink_only)
    return got if isinstance(got, Confinement) else unconfined(got)


def confine_direct(setting: str) -> Unconfined:
    """The confine step of a program that starts or dials its servers itself: never confined
    (its servers would be too); raises :class:`SandboxError` when a sandbox was required."""
    if setting == "auto":
        return {
            "setting": setting,
            "tier": None,
            "note": "direct mode: a program that starts its servers itself cannot be sandboxed",
        }
    if setting != "off":
        raise SandboxError(DIRECT_REFUSAL)
    return {"setting": setting, "tier": None}


def _remove_cgroup(cgroup: Path | None) -> None:
    if cgroup is not None:
        run_cgroups.remove(cgroup)


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


async def _confinement(
    settings: CodeModeConfig,
    decision: Decision,
    limits: dict[str, int],
    launcher_path: Path,
    run_dir: Path,
    uid: int | None,
    cgroup: Path | None,
    port: int,
    servers_json: str,
    workdir: Path | None,
    shrink_only: bool = False,
) -> Confinement:
    """The launcher's command line and the program's environment for a run whose user, cgroup
    and directory are claimed (the caller gives them back if this raises)."""
    lim = settings.limits
    as_nobody = uid is not None
    scratch, binary = run_dir / "scratch", run_dir / "prog"
    if as_nobody:  # after switching users it re-executes itself (netns): it needs a copy it may run
        launcher_path = run_dir / "launcher"
    argv = [str(launcher_path), "-scratch", str(scratch), "-exe", str(binary), "-port", str(port)]
    if cgroup is not None:
        argv += ["-cgroup", str(cgroup)]
    if uid is not None:
        # A user of its own, so the thread limit is the program's alone (it counts the user's
        # threads; root is exempt from it, which is one more reason to switch).
        argv += ["-uid", str(uid), "-gid", str(uid), "-nproc", str(lim.threads)]
    if decision.tier == "netns":
        argv += ["-netns"]
    argv += ["-min-abi", str(decision.min_abi)]
    for key, value in limits.items():
        argv += [f"-{key}", str(value)]
    for path in READ_ONLY:
        argv += ["-ro", path]
    group = None
    if workdir is not None:
        try:
            if uid is not None and workdirs.groups_usable():
                # Runs of one model, each a user of its own, share it through the model's group.
                group = await asyncio.to_thread(workdirs.share, workdir, settings.workdir)
                argv += ["-group", str(group), "-umask", "0o007"]
            else:  # runs as gocode's own user (or all as nobody): that user owns it
                await asyncio.to_thread(
                    workdirs.prepare, workdir, settings.workdir, uid if uid is not None else os.geteuid()
                )
        except OSError as exc:
            raise SandboxError(f"the workspace {workdir} cannot be prepared: {exc}") from exc
        argv += ["-shrink" if shrink_only else "-rw", str(workdir)]
    fake = os.environ.get(FAKE_ABI_ENV)
    if fake is not None:
        argv += ["-fake-abi", fake]
    # A scrubbed environment: nothing of the controller's (its API keys) reaches the program.
    env = sandboxed_env(str(scratch), servers_json, limits["data"] * 8 // 10)
    if workdir is not None:
        env[WORKSPACE_ENV] = str(workdir)
    return Confinement(
        argv, env, scratch, lim.scratch_mb << 20, decision, limits, run_dir, binary, decision.tier == "netns", port,
        uid=uid, cwd=workdir, cwd_limit=settings.workdir.max_mb << 20, cwd_group=group, cgroup=cgroup,
        shrink_only=shrink_only and workdir is not None, threads=lim.threads if cgroup is not None or uid is not None else 0,
    )  # fmt: skip


def _mkrundir(launcher: Path, uid: int | None) -> str:
    """A directory per run: its scratch directory now, the program's own copy later
    (:func:`place_program`)."""
    run_dir = Path(tempfile.mkdtemp(prefix="gocode-run-"))
    os.chmod(run_dir, 0o755)
    (run_dir / "scratch").mkdir(mode=0o700)
    if uid is not None:
        os.chown(run_dir / "scratch", uid, uid)
        shutil.copyfile(launcher, run_dir / "launcher")
        os.chmod(run_dir / "launcher", 0o755)
    return str(run_dir)


def place_program(binary: Path, confinement: Confinement) -> None:
    """The program's own copy in its run directory, where the launcher runs it: the copy lets
    another user execute it (the workspace may sit in a private home) and is the only file the
    program may execute."""
    assert confinement.program is not None
    shutil.copyfile(binary, confinement.program)
    os.chmod(confinement.program, 0o755)


def other_mechanisms(limits: SandboxLimits | None = None) -> dict[str, str]:
    """What else the host has that gocode does not use (for the doctor): bubblewrap, cgroups."""
    bwrap = shutil.which("bwrap")
    cgroup = "no delegated cgroup v2 subtree (memory/pids limits come from rlimits instead)"
    try:
        rel = next(
            line.split("::", 1)[1]
            for line in Path("/proc/self/cgroup").read_text().splitlines()
            if line.startswith("0::")
        )
        base = Path("/sys/fs/cgroup") / rel.lstrip("/")
        controllers = (base / "cgroup.controllers").read_text().split()
        if os.access(base, os.W_OK) and "memory" in controllers:
            cgroup = f"writable {base} with {', '.join(controllers)} (not used: rlimits instead)"
    except (OSError, StopIteration):
        pass
    if run_cgroups.mechanism():
        cgroup = f"{run_cgroups.mechanism()}: one cgroup per run caps its processes and threads"
    return {
        "bubblewrap": f"{bwrap} (not used: the launcher makes its own namespaces)" if bwrap else "not installed",
        "cgroups": cgroup,
        "processLimit": process_limit_mechanism(limits),
    }


def process_limit(limits: SandboxLimits | None = None) -> tuple[str, str]:
    """How one run's processes and threads are capped here: a kind (``cgroup``, ``users``: a
    user per run, ``shared``: one user every run shares, ``none``) and a line for the doctor."""
    limits = limits or SandboxLimits()
    as_other = limits.user == "nobody" or (limits.user == "auto" and os.geteuid() == 0)
    cgroup = run_cgroups.mechanism()
    uids = limits.uids
    users = f"a user of its own per run (uidRange {uids.start}-{uids.stop - 1}, RLIMIT_NPROC)"
    shared = (
        "the shared user nobody (RLIMIT_NPROC counted over every nobody process on the host: one run's "
        "thread bomb, or anything else running as nobody, can starve the others)"
    )
    if cgroup and as_other:
        return "cgroup", f"a cgroup per run ({cgroup}), and {users if run_uids.usable(uids) else shared}"
    if cgroup:
        return "cgroup", f"a cgroup per run ({cgroup})"
    if as_other and run_uids.usable(uids):
        return "users", users
    if as_other:
        return "shared", f"{shared}: uidRange {uids.start}-{uids.stop - 1} is not mapped in this user namespace"
    return "none", "none per run: the program runs as gocode's own user, whose RLIMIT_NPROC it shares"


def process_limit_mechanism(limits: SandboxLimits | None = None) -> str:
    """How one run's processes and threads are capped here (for the doctor)."""
    return process_limit(limits)[1]


def describe(host: HostSupport) -> list[tuple[str, Decision]]:
    return [(s, decide(s, host)) for s in ("auto", "off", "on", "strict", "best-effort")]
