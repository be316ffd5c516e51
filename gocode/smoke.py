"""``gocode smoke``: check MCP servers in Go code mode, as separate checks a CI system can show.

Per server: **connect** (start it and complete the handshake), **list tools**, and **compile**
(generate its bindings and build a program that references every function). Per script in
``--scripts``: **run** it through the same path as ``execute_go_code`` (a controller's pooled
sessions to the servers that passed; ``--direct``: a standalone program that starts them) and
compare with the expectation written in the script. A check that cannot run because an earlier one failed is
skipped with the reason, so one broken server never hides another.

Script expectations are comment lines at the top of the ``.go`` file (see
:func:`parse_script`); a script without one must simply succeed.
"""

from __future__ import annotations

import asyncio
import difflib
import re
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import anyio

from gocode.codemode import CodeMode
from gocode.compile.modcache import ModuleCache
from gocode.config import Config, ServerConfig
from gocode.errors import DiscoveryError, GocodeError, ScriptError
from gocode.mcp.discovery import connect, describe_server, failure, list_all_tools, server_tools
from gocode.program.code import ModelCode
from gocode.run.runner import RunResult
from gocode.schema.builder import build_package
from gocode.toolbox import Toolbox
from gocode.toolset import ServerTools, ToolSet

Status = Literal["passed", "failed", "skipped"]
PHASES = ("code", "compile", "runtime", "timeout")
DIRECTIVE = re.compile(r"^//\s*(want|want-match|want-error|timeout)\s*:(.*)$")
LOOKS_LIKE_DIRECTIVE = re.compile(r"^//\s*(want[\w-]*|time[\w-]*out)\s*:", re.IGNORECASE)


@dataclass
class Check:
    """One check: ``group`` is the server or script it belongs to (JUnit's classname)."""

    group: str
    name: str
    status: Status
    duration_ms: float = 0.0
    message: str = ""  # one line: why it failed or was skipped
    details: str = ""  # the diff, the compiler's messages, the server's error
    stderr: str = ""
    warnings: tuple[str, ...] = ()  # problems that did not fail the check (tools left out or typed loosely)

    def as_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "name": self.name,
            "status": self.status,
            "durationMs": round(self.duration_ms, 1),
            "message": self.message,
            "details": self.details,
            "stderr": self.stderr,
            "warnings": list(self.warnings),
        }


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    duration_ms: float = 0.0

    def count(self, status: Status) -> int:
        return sum(1 for c in self.checks if c.status == status)

    @property
    def ok(self) -> bool:
        return self.count("failed") == 0

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "passed": self.count("passed"),
            "failed": self.count("failed"),
            "skipped": self.count("skipped"),
            "durationMs": round(self.duration_ms, 1),
            "checks": [c.as_json() for c in self.checks],
        }


# --- scripts --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Script:
    """A smoke script and what it must give."""

    path: Path
    code: str
    output: str | None = None  # exact stdout
    match: str | None = None  # a regular expression stdout must contain (re.search, multiline)
    error_phase: str | None = None  # the run must fail in this phase ("any": in any phase)
    error_match: str | None = None  # … with an error text matching this expression
    timeout: float | None = None


def parse_script(path: Path, text: str) -> Script:
    """Read the expectation from the comment lines at the top of a script.

    ::

        // want: Paris 65.3°F sunny        exact stdout, one line per directive (in order)
        // want-match: ^Paris \\d+          a regular expression stdout must contain
        // want-error: compile undefined    the run must fail in this phase (code, compile,
                                            runtime, timeout or any), optionally with an
                                            error text matching the expression after it
        // timeout: 10                      seconds for this script

    Exact output may instead live next to the script in ``NAME.out``. Directives end at the
    first line that is not a ``//`` comment; later comments are just Go.
    """
    lines: list[str] = []
    match = error_phase = error_match = None
    timeout: float | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not stripped.startswith("//"):
            if stripped:
                break
            continue
        m = DIRECTIVE.match(raw.lstrip().rstrip("\r"))  # trailing spaces of `want:` lines are output
        if not m:
            if LOOKS_LIKE_DIRECTIVE.match(stripped):
                # A misspelt expectation must not turn into "no expectation" and a false pass.
                raise ScriptError(
                    f"{path.name}:{n}: unknown directive {stripped.split(':')[0]!r} "
                    "(known: want, want-match, want-error, timeout)"
                )
            continue
        key, value = m.group(1), m.group(2).strip()
        if key == "want":
            lines.append(m.group(2)[1:] if m.group(2).startswith(" ") else m.group(2))
        elif key == "want-match":
            match = _regexp(path, n, value)
        elif key == "want-error":
            phase, _, rest = value.partition(" ")
            if phase not in (*PHASES, "any"):
                raise ScriptError(
                    f"{path.name}:{n}: want-error needs a phase ({', '.join(PHASES)} or any), got {phase!r}"
                )
            error_phase, error_match = phase, (_regexp(path, n, rest.strip()) if rest.strip() else None)
        elif key == "timeout":
            try:
                timeout = float(value)
            except ValueError:
                raise ScriptError(f"{path.name}:{n}: timeout must be a number of seconds, got {value!r}") from None
            if timeout <= 0:
                raise ScriptError(f"{path.name}:{n}: timeout must be positive")
    output = "\n".join(lines) + "\n" if lines else None
    golden = path.with_suffix(".out")
    if golden.is_file():
        if output is not None:
            raise ScriptError(f"{path.name}: both `// want:` lines and {golden.name}; keep one")
        output = golden.read_text(encoding="utf-8")
    if error_phase and (output is not None or match):
        raise ScriptError(f"{path.name}: want-error cannot be combined with want / want-match")
    return Script(path, text, output, match, error_phase, error_match, timeout)


def _regexp(path: Path, line: int, pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ScriptError(f"{path.name}:{line}: bad regular expression {pattern!r}: {exc}") from None
    return pattern


def judge(script: Script, result: RunResult) -> tuple[bool, str, str]:
    """Whether a run meets the script's expectation: (ok, one-line message, details)."""
    if script.error_phase:
        if result.ok:
            return False, f"expected a {script.error_phase} failure, but the program succeeded", result.output
        if script.error_phase != "any" and result.phase != script.error_phase:
            return False, f"expected a {script.error_phase} failure, got {result.phase}", result.error_text()
        if script.error_match and not re.search(script.error_match, result.error_text(), re.MULTILINE):
            return False, f"the error does not match /{script.error_match}/", result.error_text()
        return True, "", ""
    if not result.ok:
        return False, f"{result.phase} failure", result.error_text()
    if script.output is not None and result.output.rstrip("\n") != script.output.rstrip("\n"):
        diff = difflib.unified_diff(
            script.output.splitlines(), result.output.splitlines(), "expected", "actual", lineterm=""
        )
        return False, "the output differs from the expected output", "\n".join(diff)
    if script.match and not re.search(script.match, result.output, re.MULTILINE):
        return False, f"the output does not match /{script.match}/", result.output
    return True, "", ""


def find_scripts(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("*.go") if p.is_file())


# --- servers --------------------------------------------------------------------------------


async def check_server(name: str, server: ServerConfig) -> tuple[list[Check], ServerTools | None]:
    """Connect and list tools, as two checks."""
    group = f"server {name}"
    if server.type == "stdio" and not (shutil.which(server.command or "") or Path(server.command or "").is_file()):
        msg = f"{describe_server(name, server)}: command not found: {server.command}"
        return [
            Check(group, "connect", "failed", message=msg.splitlines()[0], details=msg),
            Check(group, "list tools", "skipped", message="the server did not connect"),
        ], None
    checks: list[Check] = []
    tools: ServerTools | None = None
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        log = errlog if server.type == "stdio" else None
        start = time.monotonic()
        stage = "connect"
        try:
            async with connect(name, server, log, read_timeout=server.timeout) as (client, version):
                checks.append(Check(group, "connect", "passed", _ms(start), message=f"protocol {version}"))
                stage, start = "list tools", time.monotonic()
                with anyio.fail_after(server.timeout):
                    raw = await list_all_tools(client)
                tools = server_tools(name, server, raw, version, client.server_info)
                note = f"{len(tools.tools)} tools" + (f", {len(tools.warnings)} warnings" if tools.warnings else "")
                checks.append(Check(group, "list tools", "passed", _ms(start), message=note, warnings=tools.warnings))
        except (Exception, BaseExceptionGroup) as exc:
            err = failure(name, server, exc, log)
            if stage == "connect":
                checks.append(_failed(group, "connect", start, err))
                checks.append(Check(group, "list tools", "skipped", message="the server did not connect"))
            elif tools is None:
                checks.append(_failed(group, "list tools", start, err))
            else:
                tools = None  # listed, then failed on the way out: the list is still suspect
                checks.append(_failed(group, "close", start, err))
    return checks, tools


def _failed(group: str, name: str, start: float, err: DiscoveryError) -> Check:
    first = err.summary.split("\n", 1)[0]
    return Check(group, name, "failed", _ms(start), message=first, details=err.summary, stderr=err.stderr)


async def check_compile(modcache: ModuleCache, tools: ServerTools) -> Check:
    """Build a program that references every function of one server's bindings."""
    group, start = f"server {tools.server}", time.monotonic()
    if not tools.tools:
        return Check(group, "compile", "skipped", message="the server lists no tools (after its tool filters)")
    pkg = build_package(ToolSet((tools,)))
    build = await modcache.build(pkg, ModelCode(_references(pkg)))
    if build.ok:
        note = f"{len(pkg.funcs)} functions" + (f", {len(pkg.warnings)} schema warnings" if pkg.warnings else "")
        return Check(group, "compile", "passed", _ms(start), message=note, details="\n".join(pkg.warnings))
    # Find the tools whose schemas break the build, so the report names them.
    broken = []
    for tool in tools.tools:
        one = build_package(ToolSet((replace(tools, tools=(tool,)),)))
        alone = await modcache.build(one, ModelCode(_references(one)))
        if not alone.ok:
            broken.append(f"tool {tool.name}:\n{alone.output}")
    details = "\n\n".join(broken) or build.output
    names = ", ".join(b.split(":", 1)[0].removeprefix("tool ") for b in broken)
    message = f"the bindings do not compile ({'tools: ' + names if broken else 'see the Go errors'})"
    return Check(group, "compile", "failed", _ms(start), message=message, details=details)


def _references(pkg: Any) -> str:
    return "".join(f"_ = {f.name}\n" for f in pkg.funcs)


# --- the run --------------------------------------------------------------------------------


Progress = Callable[[Check], None]


async def run_smoke(
    config: Config,
    model: str | None,
    scripts: list[Path],
    *,
    modcache: ModuleCache,
    timeout: float | None = None,
    direct: bool = False,
    progress: Progress | None = None,
) -> Report:
    """Every check, in order: servers (concurrently connected), their bindings, the scripts."""
    report, start = Report(), time.monotonic()

    def add(check: Check) -> None:
        report.checks.append(check)
        if progress:
            progress(check)

    names = sorted(config.mcp_servers)
    results = await asyncio.gather(*(check_server(n, config.mcp_servers[n]) for n in names))
    listed: list[ServerTools] = []
    for checks, tools in results:
        for c in checks:
            add(c)
        if tools is not None:
            listed.append(tools)
    if not modcache.ready:
        await asyncio.to_thread(modcache.ensure)
    for name, (_, tools) in zip(names, results, strict=True):
        if tools is None:
            add(Check(f"server {name}", "compile", "skipped", message="the server's tools could not be listed"))
        else:
            add(await check_compile(modcache, tools))
    failed_servers = [n for n, (_, t) in zip(names, results, strict=True) if t is None]
    if scripts:
        await _run_scripts(config, model, listed, scripts, modcache, timeout, failed_servers, direct, add)
    report.duration_ms = _ms(start)
    return report


async def _run_scripts(
    config: Config,
    model: str | None,
    listed: list[ServerTools],
    scripts: list[Path],
    modcache: ModuleCache,
    timeout: float | None,
    failed_servers: list[str],
    direct: bool,
    add: Callable[[Check], None],
) -> None:
    """Scripts run as execute_go_code runs them: through a controller's pooled sessions to the
    servers that passed (or, with ``direct``, as standalone programs that start them)."""
    if direct:
        code_mode = CodeMode(config, model, module_cache=modcache)
        code_mode.use(listed)
        for path in scripts:
            add(await run_script(code_mode.execute, path, timeout, failed_servers))
        return
    ok_servers = {s.server: config.mcp_servers[s.server] for s in listed}
    pooled_config = config.model_copy(update={"mcp_servers": ok_servers})
    try:
        async with Toolbox(pooled_config, model, module_cache=modcache, prewarm=False) as box:
            for path in scripts:
                add(await run_script(box.execute, path, timeout, failed_servers))
    except GocodeError as exc:  # a server that passed its checks failed when reconnecting
        for path in scripts:
            add(Check("script", path.name, "failed", message=f"the servers could not be reached: {exc}"))


async def run_script(
    execute: Callable[[str, float | None], Awaitable[RunResult]],
    path: Path,
    timeout: float | None,
    failed_servers: list[str],
) -> Check:
    group, start = "script", time.monotonic()
    try:
        script = parse_script(path, path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ScriptError) as exc:
        return Check(group, path.name, "failed", _ms(start), message=f"cannot read the script: {exc}")
    result = await execute(script.code, script.timeout or timeout)
    ok, message, details = judge(script, result)
    if not ok and failed_servers and result.phase == "compile":
        message += f" (servers that failed: {', '.join(failed_servers)}; their tools are not available)"
    stderr = "" if result.phase == "compile" else result.stderr
    return Check(group, path.name, "passed" if ok else "failed", _ms(start), message, details, stderr)


def _ms(start: float) -> float:
    return (time.monotonic() - start) * 1000
