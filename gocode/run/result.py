"""The answer to one run (:class:`RunResult`) and the phases a run can end in (:data:`Phase`).

A result is composed once: the runner makes it, and the run's last step
(:func:`finish`) adds what the build and the workspace say, as a new value.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from gocode.compile.modcache import BuildResult
from gocode.config import CodeModeConfig
from gocode.mcp.toolcall import ToolCall
from gocode.program.diagnostics import Diagnostic, parse_diagnostics
from gocode.program.plan import nil_result_hint
from gocode.run.approvals import ApprovalRequest
from gocode.run.kept import head_and_tail, kept_label, open_kept
from gocode.run.workdir import Usage

# Where a run ended: the one list of phases (docs/results-and-streaming.md lists them, and a
# fast test keeps the two equal).
Phase = Literal[
    "ok",
    "code",
    "compile",
    "runtime",
    "timeout",
    "limit",
    "resources",
    "sandbox",
    "busy",
    "warming",
    "approval",
    "setup",
]
# Failures a retry may cure: no slot free, still warming up, the host out of processes or memory
# for a moment (the program itself did not fail).
RETRYABLE_PHASES = frozenset({"busy", "warming", "resources"})


@dataclass(frozen=True)
class RunResult:
    """The answer to one ``execute_go_code`` call, composed once: a step that adds to it builds
    a new one (``dataclasses.replace``); its lists are not changed after it is made.

    ``ok`` with ``phase="ok"`` when the program exited 0; otherwise ``phase`` says where it
    failed, one of :data:`Phase` (each listed in docs/results-and-streaming.md, "Phases").
    ``output`` is what the program printed on stdout (so far), ``stderr`` its error stream or
    the compiler's messages. ``result`` is the value the program gave ``result(v)`` (JSON
    data), None if it gave none.
    """

    ok: bool
    phase: Phase
    output: str = ""
    stderr: str = ""
    exit_code: int | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    duration_ms: float = 0.0
    build_ms: float = 0.0
    run_ms: float = 0.0
    cached_binary: bool = False
    build_mode: str = ""  # "direct" (compiler and linker), "go build", or "cached"
    runner: str = ""  # the runtime the program was linked with: "sdk" or "loopback" (gocode.compile.runners)
    truncated: bool = False
    pooled: bool = False  # the program reached the servers through the controller's sessions
    tool_calls: list[ToolCall] = field(default_factory=list)
    sandbox: dict[str, Any] | None = None  # the effective policy when sandboxed (tier, limits, …)
    run_id: str = ""  # the recording of its calls (gocode exec --replay RUN_ID); pooled runs only
    output_file: str | None = None  # where output beyond the cap was kept whole (in the workspace)
    output_bytes: int = 0  # what the program printed on stdout in all
    plan: dict[str, Any] | None = None  # the tools the program could call, known before it ran
    result: Any = None
    # A result() whose JSON is longer than the output cap: kept whole in the workspace, and what
    # a model reads of it instead (head, tail, size and the file); see keep_value.
    result_file: str | None = None
    result_excerpt: str = ""
    # Phase "approval" with the client still to be asked (2026-07-28 era): what it is asked.
    # Not part of the answer's JSON: the server turns it into its request to the client.
    asks: ApprovalRequest | None = None

    def error_text(self) -> str:
        """What a model reads when the call failed: the phase, the messages, the output so far."""
        if not self.output or self.ok:
            return self.error_message()
        return f"{self.error_message()}\n\nstdout before the failure:\n{self.output.rstrip()}"

    def error_message(self) -> str:
        """The phase and the messages of a failed call, without the output it printed (which
        :meth:`error_text` adds): for a reader who has seen that output already."""
        if self.ok:
            return ""
        heads = {
            "code": "the code cannot be placed in Run",
            "compile": "compile error",
            "runtime": f"runtime error (exit status {self.exit_code})",
            "timeout": "timeout",
            "limit": "a sandbox limit was reached",
            "sandbox": "the sandbox refused to run the program",
            "busy": "not run (retry later)",
            "approval": "held for approval",
            "warming": "not run yet (retry shortly)",
            "setup": "not run",
            "resources": "the host ran out of a resource (retry later)",
        }
        return f"{heads[self.phase]}:\n{self.stderr.strip()}" if self.stderr.strip() else heads[self.phase]

    def as_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["duration_ms"] = round(self.duration_ms, 1)
        doc["build_ms"] = round(self.build_ms, 1)
        doc["run_ms"] = round(self.run_ms, 1)
        doc["tool_calls"] = [c.as_json() for c in self.tool_calls]
        del doc["asks"]
        return doc


def append_line(text: str, line: str) -> str:
    """``text`` with ``line`` on a line of its own after it (``text`` alone when ``line`` is empty)."""
    if not line:
        return text
    return (text.rstrip() + "\n" if text.strip() else "") + line


def compile_failure(build: BuildResult, note: str, start: float, *, down: Sequence[str] = ()) -> RunResult:
    """The answer to code that did not build: the compiler's messages at the model's lines.
    ``down``: why servers failed to start, when the code may have named their tools; then the
    run is a ``setup`` failure (the config's servers, not the code), and says so first. A build
    stopped at the run's timeout is a ``timeout``, naming the limit."""
    if build.timed_out is not None:
        return RunResult(
            False, "timeout", stderr=build_timeout(build.timed_out), build_ms=build.duration_ms,
            build_mode=build.mode, runner=build.runner, duration_ms=(time.monotonic() - start) * 1000,
        )  # fmt: skip
    if down:
        head = "\n".join(f"{why} (its tools are not in the program)" for why in down)
        stderr = f"{head}\n{build.output.rstrip()}\nfix the failed server in the config (its command, arguments, environment) or remove it"
    return RunResult(
        False,
        "setup" if down else "compile",
        stderr=stderr if down else build.output + note,
        diagnostics=list(build.diagnostics) or parse_diagnostics(build.output),
        warnings=list(build.notes),
        build_ms=build.duration_ms,
        build_mode=build.mode,
        runner=build.runner,
        duration_ms=(time.monotonic() - start) * 1000,
    )


def build_timeout(limit: float) -> str:
    """What a run whose build outlasted its timeout says."""
    return (
        f"the program's build (type check, compile and link) did not finish within {limit:g} s, the run's "
        "timeout, and was stopped: nothing ran. Code this slow to compile is too large (many statements, "
        "huge literals): make it smaller"
    )


def finish(
    ran: RunResult,
    build: BuildResult,
    start: float,
    sandbox: dict[str, Any] | None,
    workspace: tuple[Usage, Usage] | None = None,
) -> RunResult:
    """The finish step: what the runner answered, with what the build, the sandbox decision
    (``sandbox``: why it ran unconfined, None when it was confined) and the workspace before
    and after the run (``workspace``) add to it. A workspace over its cap that the run grew
    fails it (its files stay: nothing is deleted silently); one it did not grow is a warning."""
    ok, phase, stderr, warnings = ran.ok, ran.phase, ran.stderr, list(ran.warnings)
    if workspace is not None:
        before, left = workspace
        if left.over and left.grew(before):
            ok, phase, stderr = False, "limit", append_line(stderr, left.message())
        elif left.over:
            warnings.append(f"still over the cap: {left.message()}")
    if phase == "runtime":
        stderr = append_line(stderr, nil_result_hint(stderr, build.plan))
    return replace(
        ran,
        ok=ok,
        phase=phase,
        stderr=stderr,
        sandbox=sandbox if sandbox is not None else ran.sandbox,
        build_ms=build.duration_ms,
        plan=build.plan.as_json() if build.plan is not None else None,
        cached_binary=build.cached,
        build_mode=build.mode,
        runner=build.runner,
        warnings=[*build.notes, *warnings],
        duration_ms=(time.monotonic() - start) * 1000,
    )


def keep_value(result: RunResult, workdir: Path, settings: CodeModeConfig) -> RunResult:
    """A result() value whose JSON is longer than the output cap, kept whole in the workspace
    as long output is: the model reads its head and tail, its size and the file
    (``result_excerpt``), and the next program can read the rest. The value itself stays in the
    structured result, for the client. Blocking: call it in a worker thread."""
    if result.result is None or not workdir.is_dir():
        return result
    data = json.dumps(result.result, ensure_ascii=False).encode()
    cap = settings.max_output_bytes
    if len(data) <= cap:
        return result
    not_kept = "the result() value was not kept in the workspace: {}"
    try:
        kept = open_kept(workdir, settings.workdir, settings.limits.file_size_mb << 20, "result", ".json")
    except OSError as exc:  # gocode-output is not a directory: the value is shown whole
        return replace(result, warnings=[*result.warnings, not_kept.format(exc)])
    if kept is None:  # the workspace is full: the value is shown whole, as without a workspace
        return result
    try:
        with kept.file:
            kept.file.write(data[: kept.cap])
    except OSError as exc:  # the disk is full: the value is shown whole, as without a workspace
        return replace(result, warnings=[*result.warnings, not_kept.format(exc)])
    tail = cap // 4
    excerpt = head_and_tail(
        data[: cap - tail], data[-tail:], len(data), min(kept.cap, len(data)), kept_label(kept.path, workdir), "result"
    )
    return replace(result, result_file=str(kept.path), result_excerpt=excerpt)
