"""Run several ``gocode serve --transport http`` replicas behind HAProxy on this machine.

    python deploy/cluster.py -c gocode.yaml --replicas 3 --port 8080   # until Ctrl-C

Every replica is a separate process on its own loopback port. They share one warmed Go cache
(``GOCODE_CACHE_DIR``), mounted read-only for them when the host allows a private mount
namespace (``unshare -m``, as root), and each writes its runs and built programs to its own
state directory (``GOCODE_STATE_DIR``). HAProxy runs ``deploy/haproxy/haproxy.cfg`` with the
frontend and server addresses replaced by the ones chosen here, so what is tested is the
shipped file.

The tests and ``bench/load.py`` use :class:`Cluster`; it needs ``haproxy`` on PATH (``make
setup`` installs it) and tears everything down, process groups included, when it exits.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
HAPROXY_CFG = HERE / "haproxy" / "haproxy.cfg"
# The gocode beside this Python (a venv), else the one on PATH.
GOCODE = str(Path(sys.executable).parent / "gocode")
if not Path(GOCODE).is_file():
    GOCODE = shutil.which("gocode") or "gocode"

# A program warms the cache for a config: its bindings and their direct-build config.
WARM_PROGRAM = 'fmt.Println("warm")\n'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def haproxy_config(template: str, frontend_port: int, backend_ports: list[int]) -> str:
    """The shipped config with its ``bind`` and ``server`` lines pointed at these ports."""
    text, binds = re.subn(r"(?m)^(\s*bind\s+)\S+", rf"\g<1>127.0.0.1:{frontend_port}", template)
    lines, servers = [], 0
    for line in text.splitlines():
        m = re.match(r"(\s*)server\s+\S+\s+\S+(.*)$", line)
        if m:
            if servers == 0:
                lines += [
                    f"{m.group(1)}server gocode{i + 1} 127.0.0.1:{port}{m.group(2)}"
                    for i, port in enumerate(backend_ports)
                ]
            servers += 1
            continue
        lines.append(line)
    if binds != 1 or servers == 0:
        raise ValueError("the HAProxy config needs exactly one bind line and at least one server line")
    return "\n".join(lines) + "\n"


def can_unshare_mounts() -> bool:
    """True if this process may make a private mount namespace (to mount the cache read-only)."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return probe.returncode == 0


def http_get(url: str, token: str | None = None, timeout: float = 5) -> tuple[int, str]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")
    except OSError as exc:
        return 0, str(exc)


def rss_bytes(pid: int) -> int:
    """Resident memory of one process, from /proc (0 if it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def descendants(pid: int) -> set[int]:
    """The live processes below ``pid`` (children, grandchildren, ...), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent counts as gone)."""
    try:
        return ") Z " not in Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text as ``{"name{labels}": value}`` (comments dropped)."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            with contextlib.suppress(ValueError):
                out[name] = float(value)
    return out


@dataclass
class Replica:
    name: str
    port: int
    state_dir: Path
    log: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


@dataclass
class Cluster:
    """N replicas and HAProxy; a context manager that starts them and always stops them.

    Not thread-safe; one cluster per test or benchmark.
    """

    config: Path
    replicas: int = 3
    token: str | None = None
    model: str | None = None
    cache_dir: Path | None = None  # the shared cache; default: gocode's (GOCODE_CACHE_DIR, ~/.cache/gocode)
    read_only: bool = True  # mount the shared cache read-only for the replicas when the host allows it
    port: int = 0  # HAProxy's port; 0: a free one
    extra_args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    work: Path = field(init=False)
    members: list[Replica] = field(init=False, default_factory=list)
    haproxy: subprocess.Popen[bytes] | None = field(init=False, default=None)
    haproxy_log: Path = field(init=False)
    cache_read_only: bool = field(init=False, default=False)

    # --- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> Cluster:
        self.work = Path(tempfile.mkdtemp(prefix="gocode-cluster-"))
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def base_env(self) -> dict[str, str]:
        env = {**os.environ, **self.env}
        if self.cache_dir is not None:
            env["GOCODE_CACHE_DIR"] = str(self.cache_dir)
        if self.token:
            env["GOCODE_TOKEN"] = self.token
        return env

    def shared_cache(self) -> Path:
        if self.cache_dir is not None:
            return self.cache_dir
        env = self.base_env()
        if env.get("GOCODE_CACHE_DIR"):
            return Path(env["GOCODE_CACHE_DIR"]).expanduser()
        return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gocode"

    def warm(self) -> None:
        """Warm the shared cache for the config (it is written here, before it turns read-only)."""
        env = {k: v for k, v in self.base_env().items() if k != "GOCODE_STATE_DIR"}
        subprocess.run([GOCODE, "warmup"], env=env, check=True, capture_output=True, timeout=900)
        model = ["--model", self.model] if self.model else []
        subprocess.run(
            [GOCODE, "exec", "-c", str(self.config), *model, "-"],
            input=WARM_PROGRAM.encode(), env=env, capture_output=True, timeout=300,
        )  # fmt: skip

    def start(self) -> None:
        if shutil.which("haproxy") is None:
            raise RuntimeError("haproxy is not installed: run `make setup` (or apt-get install -y haproxy)")
        self.warm()
        self.cache_read_only = self.read_only and can_unshare_mounts()
        for i in range(self.replicas):
            name = f"gocode{i + 1}"
            state = self.work / name
            state.mkdir()
            self.members.append(Replica(name, free_port(), state, self.work / f"{name}.log"))
        for r in self.members:
            self.start_replica(r)
        for r in self.members:
            self.wait_ready(r)
        self.port = self.port or free_port()
        cfg = self.work / "haproxy.cfg"
        cfg.write_text(haproxy_config(HAPROXY_CFG.read_text(), self.port, [r.port for r in self.members]))
        self.haproxy_log = self.work / "haproxy.log"
        with open(self.haproxy_log, "wb") as log:
            self.haproxy = subprocess.Popen(
                ["haproxy", "-f", str(cfg), "-db"],
                env=self.base_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        self.wait_ready_lb()

    def start_replica(self, r: Replica) -> None:
        env = {**self.base_env(), "GOCODE_STATE_DIR": str(r.state_dir), "GOCODE_LOG_FORMAT": "json"}
        # HAProxy, on this machine, names each client in X-Forwarded-For (`option forwardfor`).
        env.setdefault("FORWARDED_ALLOW_IPS", "127.0.0.1")
        argv = [GOCODE, "serve", "-c", str(self.config), "--transport", "http", "--port", str(r.port)]
        argv += [*(["--model", self.model] if self.model else []), *self.extra_args]
        if self.cache_read_only:
            cache = str(self.shared_cache())
            # A private mount namespace: the cache is read-only for this replica alone.
            argv = ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"', cache, *argv]
        with open(r.log, "ab") as log:
            r.proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, r: Replica, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not r.alive:
                raise RuntimeError(f"replica {r.name} exited; its log:\n{r.log.read_text()[-3000:]}")
            status, _ = http_get(f"http://127.0.0.1:{r.port}/readyz", timeout=2)
            if status == 200:
                return
            time.sleep(0.2)
        raise TimeoutError(f"replica {r.name} was not ready within {timeout:g} s")

    def wait_ready_lb(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.haproxy is None or self.haproxy.poll() is not None:
                raise RuntimeError(f"haproxy exited; its log:\n{self.haproxy_log.read_text()[-3000:]}")
            if http_get(f"http://127.0.0.1:{self.port}/readyz", timeout=2)[0] == 200:
                return
            time.sleep(0.2)
        raise TimeoutError(f"haproxy did not answer on port {self.port} within {timeout:g} s")

    def stop(self) -> None:
        procs = [r.proc for r in self.members if r.proc is not None]
        if self.haproxy is not None:
            procs.append(self.haproxy)
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for p in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=max(deadline - time.monotonic(), 0.1))
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)  # the group: a replica's servers and programs too
            p.wait()
        if getattr(self, "work", None) is not None and not os.environ.get("GOCODE_KEEP_CLUSTER"):
            shutil.rmtree(self.work, ignore_errors=True)

    # --- operations ------------------------------------------------------------------------

    def kill(self, index: int) -> set[int]:
        """SIGKILL one replica and everything it started (no chance to answer anything).

        Returns the processes it had started (its servers and programs) that are still running
        after a few seconds: none, unless something escaped its process group.
        """
        r = self.members[index]
        assert r.proc is not None
        tree = descendants(r.proc.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(r.proc.pid, signal.SIGKILL)
        r.proc.wait()
        deadline = time.monotonic() + 5
        while (left := {p for p in tree if alive(p)}) and time.monotonic() < deadline:
            time.sleep(0.1)
        return left

    def metrics(self, index: int) -> dict[str, float]:
        status, text = http_get(f"http://127.0.0.1:{self.members[index].port}/metrics", self.token)
        return parse_metrics(text) if status == 200 else {}

    def in_flight(self, index: int) -> int:
        """Calls a replica is working on: programs running plus programs waiting for a slot."""
        m = self.metrics(index)
        return int(m.get("gocode_runs_in_flight", 0) + m.get("gocode_queue_depth", 0))

    def calls(self, index: int) -> int:
        """execute_go_code calls a replica has finished, whatever the outcome."""
        m = self.metrics(index)
        return int(sum(v for k, v in m.items() if k.startswith("gocode_calls_total{") and 'kind="code"' in k))

    def rss(self, index: int) -> int:
        """The replica's controller (the ``gocode serve`` process) resident memory in bytes."""
        r = self.members[index]
        return rss_bytes(r.proc.pid) if r.alive and r.proc is not None else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-c", "--config", type=Path, required=True, help="gocode config file")
    ap.add_argument("--replicas", type=int, default=3)
    ap.add_argument("--port", type=int, default=8080, help="HAProxy's port on 127.0.0.1")
    ap.add_argument("--model")
    ap.add_argument("--writable-cache", action="store_true", help="do not mount the shared cache read-only")
    args = ap.parse_args()
    cluster = Cluster(
        args.config.resolve(), args.replicas, token=os.environ.get("GOCODE_TOKEN"), model=args.model,
        read_only=not args.writable_cache, port=args.port,
    )  # fmt: skip
    with cluster:
        ro = "read-only" if cluster.cache_read_only else "writable"
        print(f"{args.replicas} replicas ({ro} shared cache {cluster.shared_cache()}) behind HAProxy: {cluster.url}")
        for r in cluster.members:
            print(f"  {r.name}: http://127.0.0.1:{r.port} (state {r.state_dir}, log {r.log})")
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    return 0


if __name__ == "__main__":
    sys.exit(main())
