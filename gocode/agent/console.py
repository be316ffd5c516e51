"""``gocode ask``: the steps on stderr as they happen, the answer (or the transcript) on stdout.

On a terminal each step shows a spinner (rich) while it runs and one line when it ends; when
stderr is a pipe or a file, each step is one plain line when it starts and one when it ends.
The model's code is shown as it arrives, and a failed run's error, so a reader can follow the
repairs.
"""

from __future__ import annotations

import json
import sys
from typing import IO, Any

import anyio
from rich.console import Console
from rich.markup import escape
from rich.status import Status

from gocode.agent.orchestrator import Orchestrator, Step, Transcript
from gocode.config import Config, load_config
from gocode.errors import GocodeError
from gocode.execution import Approved, Ask, approver_for
from gocode.run.approvals import ApprovalRequest
from gocode.terminal import terminal_text

EXIT_OK, EXIT_FAILED, EXIT_CANNOT_RUN = 0, 1, 2


def _shown(text: str) -> str:
    """Rich markup escaped, and no control character (a server's error may carry some)."""
    return escape(terminal_text(text))


_ERROR_LINES = 12  # of a failed run's error, on the terminal (the transcript has it whole)


class StepPrinter:
    """An :class:`~gocode.agent.orchestrator.Observer` writing to ``stream`` (default stderr)."""

    def __init__(self, stream: IO[str] | None = None, *, live: bool | None = None) -> None:
        stream = stream or sys.stderr
        self.live = stream.isatty() if live is None else live
        self._console = Console(
            file=stream, highlight=False, soft_wrap=True, force_terminal=self.live or None, no_color=not self.live
        )
        self._stream = stream
        self._status: Status | None = None

    def started(self, step: Step) -> None:
        if self.live:
            self._status = self._console.status(_shown(step.title) + "…", spinner="dots")
            self._status.start()
        else:
            self._line(f"gocode: {step.title}…")

    def finished(self, step: Step) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
        mark = "✓" if step.ok else "✗"
        tokens = f", {step.usage.total} tokens" if step.usage and step.usage.total else ""
        retries = f", {step.attempts - 1} retries" if step.attempts > 1 else ""
        head = f"{mark} {step.title}: {step.summary} ({step.duration_ms / 1000:.1f} s{tokens}{retries})"
        if self.live:
            self._console.print(_shown(head), style="green" if step.ok else "yellow")
        else:
            self._line(f"gocode: {head}")
        if step.kind == "write" and step.code:
            self._block(step.code)
        if step.kind == "run" and step.run is not None and not step.run.ok:
            lines = step.run.error_text().splitlines()
            more = [f"… ({len(lines) - _ERROR_LINES} more lines)"] if len(lines) > _ERROR_LINES else []
            self._block("\n".join(lines[:_ERROR_LINES] + more))

    def pause(self) -> None:
        """Stop the running step's spinner (before a question is asked on the terminal)."""
        if self._status is not None:
            self._status.stop()
            self._status = None

    def note(self, text: str) -> None:
        """A line from gocode itself between steps (the first run's set-up saying what it does)."""
        if self.live:
            self._console.print(_shown(text), style="dim")
        else:
            self._line(f"gocode: {text}")

    def _block(self, text: str) -> None:
        body = "\n".join("    " + line for line in text.rstrip().splitlines())
        if self.live:
            self._console.print(_shown(body), style="dim")
        else:
            self._line(body)

    def _line(self, text: str) -> None:
        self._stream.write(text + "\n")
        self._stream.flush()


def exit_code(t: Transcript) -> int:
    """0 answered; 2 the model's endpoint could not be used; 1 otherwise (no tool, no working code)."""
    if t.ok:
        return EXIT_OK
    return EXIT_CANNOT_RUN if t.phase in ("model", "setup") else EXIT_FAILED


def ask(
    config: Config | str | None,
    prompt: str,
    *,
    model: str | None = None,
    max_repairs: int,
    as_json: bool,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    toolbox_options: dict[str, Any] | None = None,
    approved: Approved = frozenset(),
    ask_person: Ask | None = None,
    approval_hint: str | None = None,
) -> int:
    """Run one prompt as ``gocode ask`` does and return the exit status. Errors that stop the
    orchestrator from starting (config, key, toolchain) are raised as :class:`GocodeError`.

    A program held for approval runs when ``approved`` names every tool it is held for, else
    when ``ask_person`` says yes; refused, the prompt ends there (``approval_hint`` then said)."""
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    printer = StepPrinter(stderr)

    def asked(request: ApprovalRequest) -> bool:
        assert ask_person is not None
        printer.pause()  # the question is not drawn over by the run's spinner
        return ask_person(request)

    options = {"approve": approver_for(approved, asked if ask_person is not None else None), **(toolbox_options or {})}
    try:
        loaded = config if isinstance(config, Config) else load_config(config)
        transcript = _run(loaded, prompt, model, max_repairs, printer, options)
    except GocodeError as exc:
        if as_json:  # --json promises one document on stdout, also when nothing could start
            failed = Transcript(prompt, {"ref": model, "provider": None, "id": None}, max_repairs, error=str(exc))
            doc = {**failed.as_json(), "phase": exc.phase}
            stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
            stdout.flush()
        raise
    if as_json:
        stdout.write(json.dumps(transcript.as_json(), ensure_ascii=False) + "\n")
    elif transcript.answer is not None:
        stdout.write(transcript.answer.rstrip() + "\n")
    if not transcript.ok:
        stderr.write(terminal_text(f"gocode: {transcript.phase} error: {transcript.error}\n"))
        if transcript.phase == "approval" and approval_hint is not None:
            stderr.write(f"gocode: {approval_hint}\n")
    usage = transcript.usage()
    stderr.write(
        f"gocode: {usage['requests']} requests, {usage['input']} tokens in, {usage['output']} out; "
        f"{transcript.repairs} repair{'' if transcript.repairs == 1 else 's'}; {transcript.duration_ms / 1000:.1f} s\n"
    )
    return exit_code(transcript)


def _run(
    config: Config, prompt: str, model: str | None, max_repairs: int, printer: StepPrinter, options: dict[str, Any]
) -> Transcript:
    async def main() -> Transcript:
        # The program reaches the servers through the toolbox; warming up in the background
        # overlaps the bindings' build with the first model requests.
        # The machine's one-off set-up (a first run) says what it does, as `gocode exec` does.
        toolbox_options = {"progress": lambda line: printer.note(line), **options}
        async with Orchestrator(
            config, model, max_repairs=max_repairs, observer=printer, toolbox_options=toolbox_options
        ) as orchestrator:
            return await orchestrator.ask(prompt)

    return anyio.run(main)
