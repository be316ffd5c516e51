"""How a program reaches its tools: one strategy per way, chosen by the caller of a run.

:class:`OwnSessions` (direct mode): the program starts or dials the configured servers itself,
so it cannot be sandboxed, its servers inherit its environment, and the value it gives
``result()`` comes back in a file. :class:`ControllerLoopback` (pooled mode): the program calls
the controller's loopback endpoint with a per-run token, may be sandboxed (that endpoint is its
only door), and the controller receives its ``result()`` itself. A run asks its strategy, never
which kind it has.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from gocode.compile.modcache import ModuleCache
from gocode.compile.runners import LOOPBACK, SDK, Runner
from gocode.config import CodeModeConfig, ServerConfig
from gocode.mcp.clientinfo import client_version
from gocode.run.sandbox import Confinement, Unconfined, confine_direct, confine_pooled

RESULT_FILE_ENV = "GOCODE_RESULT_FILE"  # where a program without a controller writes result() (rt.EnvResultFile)


class Reach(Protocol):
    """How one run's program reaches its tools (see the module doc)."""

    @property
    def runner(self) -> Runner:
        """The runtime the program is linked with (:mod:`gocode.compile.runners`)."""
        ...

    def servers(self) -> dict[str, dict[str, Any]]:
        """The ``GOCODE_SERVERS`` entries, by server."""
        ...

    def server_envs(self) -> list[Mapping[str, str]]:
        """What the servers the program starts itself need in its environment."""
        ...

    async def confine(
        self, module_cache: ModuleCache, settings: CodeModeConfig, servers_json: str, timeout: float,
        workdir: Path | None, shrink_only: bool = False,
    ) -> Confinement | Unconfined:  # fmt: skip
        """The run's confinement, or why it runs without one; raises ``SandboxError`` when refused.
        ``shrink_only``: the workspace is at or over its cap, so a confined program may only read
        and delete there."""
        ...

    def result_file(self, claims: contextlib.AsyncExitStack) -> Path | None:
        """The file the program writes its ``result()`` into (removed by ``claims``), or None
        when the controller receives it."""
        ...


def server_spec(server: ServerConfig, protocol_version: str, task_tools: Sequence[str] = ()) -> dict[str, Any]:
    """How the Go program reaches a server (the GOCODE_SERVERS entry; see go_templates/rt);
    ``task_tools``: its tools that run only as MCP tasks (the program makes their calls tasks)."""
    spec: dict[str, Any] = {
        "transport": server.type,
        "protocolVersion": protocol_version,
        "connectTimeout": server.timeout,
        "clientVersion": client_version(),
    }
    if server.type == "stdio":
        spec.update(command=server.command, args=list(server.args), env=dict(server.env))
        if server.cwd:
            spec["cwd"] = server.cwd
    else:
        spec.update(url=server.url, headers=dict(server.headers))
        if server.auth is not None:
            spec["signsIn"] = True  # a 401 or 403 then points at the sign-in (go_templates/rt/httpclient.go)
    if task_tools:
        spec["taskTools"] = list(task_tools)
    return spec


@dataclass(frozen=True)
class OwnSessions:
    """Direct mode: the program opens its own sessions to ``specs`` (from :func:`server_spec`).
    ``configured``: the servers' settings; a server signed in to with OAuth gets the kept access
    token as its ``Authorization`` header (the refresh token and client secret stay here)."""

    specs: Mapping[str, Mapping[str, Any]]
    configured: Mapping[str, ServerConfig] = field(default_factory=dict)
    runner: Runner = SDK  # its own sessions: the SDK's transports

    def servers(self) -> dict[str, dict[str, Any]]:
        # Servers the program starts itself run where gocode was started, not in the workspace.
        cwd = os.getcwd()
        return {
            name: {**spec, "cwd": spec.get("cwd", cwd)} if spec["transport"] == "stdio" else self._signed(name, spec)
            for name, spec in self.specs.items()
        }

    def _signed(self, name: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        server = self.configured.get(name)
        if server is None or server.auth is None or server.url != spec.get("url"):
            return dict(spec)
        # Only here: the OAuth client loads the MCP SDK, which `gocode list` and the model view must not.
        from gocode.mcp.oauth import bearer

        token = bearer(server)
        if token is None:
            return dict(spec)
        return {**spec, "headers": {**spec.get("headers", {}), "Authorization": f"Bearer {token}"}}

    def server_envs(self) -> list[Mapping[str, str]]:
        return [spec.get("env") or {} for spec in self.specs.values()]

    async def confine(
        self, module_cache: ModuleCache, settings: CodeModeConfig, servers_json: str, timeout: float,
        workdir: Path | None, shrink_only: bool = False,
    ) -> Confinement | Unconfined:  # fmt: skip
        return confine_direct(settings.sandbox)

    def result_file(self, claims: contextlib.AsyncExitStack) -> Path | None:
        fd, name = tempfile.mkstemp(prefix="gocode-result-", suffix=".json")
        os.close(fd)
        path = Path(name)
        claims.callback(path.unlink, missing_ok=True)
        return path


@dataclass(frozen=True)
class ControllerLoopback:
    """Pooled mode: the program calls the controller's loopback endpoint on ``port``; ``specs``
    carry its address and the run's token (``Loopback.specs``)."""

    specs: Mapping[str, Mapping[str, Any]]
    port: int
    runner: Runner = LOOPBACK  # every call is a request to the endpoint: the thin runtime

    def servers(self) -> dict[str, dict[str, Any]]:
        return {name: dict(spec) for name, spec in self.specs.items()}

    def server_envs(self) -> list[Mapping[str, str]]:
        return []  # the program starts no server

    async def confine(
        self, module_cache: ModuleCache, settings: CodeModeConfig, servers_json: str, timeout: float,
        workdir: Path | None, shrink_only: bool = False,
    ) -> Confinement | Unconfined:  # fmt: skip
        return await confine_pooled(
            module_cache, settings, self.port, servers_json, timeout, workdir, shrink_only=shrink_only
        )

    def result_file(self, claims: contextlib.AsyncExitStack) -> Path | None:
        return None  # the loopback endpoint takes the value


def read_result(path: Path, cap: int) -> Any:
    """The value a program wrote for ``result()`` (None if it wrote none, it is not JSON, or
    not a regular file of at most ``cap`` bytes). The program may have replaced the file: it is
    opened without following a link and without blocking on a fifo."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > cap:
            return None
        raw = f.read(cap + 1)
    if len(raw) > cap:
        return None
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None
