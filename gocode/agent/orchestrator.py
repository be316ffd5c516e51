"""The orchestrator: decide → select → write → run → repair → answer, with one model.

:class:`Orchestrator` takes a prompt and a model of ``models[]`` and does what an agent loop
would, without offering the model any tool: it asks whether tools are needed at all (a direct
answer ends there), finds them with the search ``search_go_tools`` answers from, shows the model
only their Go declarations, runs the Go it writes through the toolbox's ``execute_go_code`` path
(the sandbox and limits of the model's ``codeMode``), feeds a failure back for at most
``max_repairs`` fixes, and asks for the answer from what the program printed. Every step is
recorded in a :class:`Transcript` and reported to an :class:`Observer` as it starts and ends.

The model's words are only ever data: a search query, Go source handed to the compiler, or the
answer. Nothing it writes reaches a shell.

Use ``async with Orchestrator(config, "ref") as o: transcript = await o.ask(prompt)``, or
:class:`SyncOrchestrator` without an event loop. One orchestrator owns its toolbox (server
sessions) and its model client and closes both; it may answer several prompts, one at a time.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Protocol

import anyio
import anyio.from_thread
import anyio.to_thread

from gocode.agent import prompts
from gocode.agent.llm import ChatClient, Message, Reply, Usage, client_for
from gocode.blocking import BlockingContext
from gocode.codemode import CodeMode
from gocode.config import Config, ModelConfig, load_config
from gocode.errors import AttemptFailed, FailPhase, ModelError
from gocode.run.runner import RunResult
from gocode.search import answer as search_mod
from gocode.search.index import ToolEntry
from gocode.toolbox import Toolbox
from gocode.view.modelview import render_funcs, render_names

DEFAULT_MAX_REPAIRS = 2
NAMES_PER_SERVER = 30
# The best matches per task the model named. An explicit limit: search_go_tools' default cut
# (tools far behind the best) drops the second tool of "get the weather for a city".
TOOLS_PER_TASK = 3  # the deciding request names at most this many tools of a server

StepKind = Literal["decide", "search", "write", "run", "answer"]


# Where an unanswered prompt stopped: the model's endpoint, the tool search, the code, the model declining.
@dataclass
class Step:
    """One step of a run; requests to the model carry what was sent, the reply and its usage."""

    kind: StepKind
    title: str
    started_ms: float = 0.0  # since the prompt was received
    duration_ms: float = 0.0
    ok: bool = True
    summary: str = ""
    system: str | None = None
    messages: list[Message] | None = None
    reply: str | None = None
    usage: Usage | None = None
    attempts: int = 0
    retry_waits_s: list[float] = field(default_factory=list)
    query: str | None = None
    tools: list[str] = field(default_factory=list)
    code: str | None = None
    run: RunResult | None = None

    def as_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "kind": self.kind,
            "title": self.title,
            "ok": self.ok,
            "summary": self.summary,
            "started_ms": round(self.started_ms, 1),
            "duration_ms": round(self.duration_ms, 1),
        }
        if self.system is not None:
            doc["request"] = {
                "system": self.system,
                "messages": [m.as_json() for m in self.messages or []],
            }
            doc["reply"] = self.reply
            doc["usage"] = self.usage.as_json() if self.usage else None
            doc["attempts"] = self.attempts
            doc["retry_waits_s"] = self.retry_waits_s
        if self.query is not None:
            doc["query"] = self.query
            doc["tools"] = self.tools
        if self.code is not None:
            doc["code"] = self.code
        if self.run is not None:
            run = self.run
            doc["run"] = {
                "ok": run.ok,
                "phase": run.phase,
                "output": run.output,
                "error": run.error_text() or None,
                "build_ms": round(run.build_ms, 1),
                "run_ms": round(run.run_ms, 1),
                "tool_calls": [c.as_json() for c in run.tool_calls],
                "sandbox": run.sandbox,
            }
        return doc


@dataclass
class Transcript:
    """Everything one prompt took: the steps in order, the answer or why there is none."""

    prompt: str
    model: dict[str, str | None]
    max_repairs: int
    steps: list[Step] = field(default_factory=list)
    answer: str | None = None
    error: str | None = None
    phase: FailPhase | None = None
    repairs: int = 0
    duration_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return self.answer is not None

    @property
    def requests(self) -> list[Step]:
        return [s for s in self.steps if s.system is not None]

    def usage(self) -> dict[str, int]:
        reqs = self.requests
        return {
            "requests": len(reqs),
            "input": sum(s.usage.input_tokens or 0 for s in reqs if s.usage),
            "output": sum(s.usage.output_tokens or 0 for s in reqs if s.usage),
            "total": sum(s.usage.total for s in reqs if s.usage),
        }

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "prompt": self.prompt,
            "model": self.model,
            "answer": self.answer,
            "error": self.error,
            "phase": self.phase,
            "repairs": self.repairs,
            "max_repairs": self.max_repairs,
            "usage": self.usage(),
            "duration_ms": round(self.duration_ms, 1),
            "steps": [s.as_json() for s in self.steps],
        }


class Observer(Protocol):
    """Told when each step starts and when it ends (``step`` then carries its outcome)."""

    def started(self, step: Step) -> None: ...

    def finished(self, step: Step) -> None: ...


def pick_model(config: Config, ref: str | None) -> ModelConfig:
    """The ``models[]`` entry to ask: ``ref``, else ``defaults.model``, else the only one with a
    ``type``; raises :class:`ModelError` naming the choices otherwise."""
    ref = ref or config.defaults.model
    if ref is not None:
        for model in config.models:
            if model.ref == ref:
                return model
        known = ", ".join(m.ref for m in config.models) or "none defined"
        raise ModelError(f"{config.source}: unknown model ref {ref!r} (models: {known})")
    usable = [m for m in config.models if m.type is not None]
    if len(usable) == 1:
        return usable[0]
    if not usable:
        raise ModelError(
            f"{config.source}: no model to ask: add one to `models` with `ref`, `type` (openai or anthropic), "
            "`id`, `api_key_env` and, for another endpoint than the provider's, `base_url`"
        )
    raise ModelError(
        f"{config.source}: several models can be asked; choose one with --model: {', '.join(m.ref for m in usable)}"
    )


class Orchestrator:
    """Answers prompts with one model and one model's tools. Use ``async with``.

    ``client`` and ``toolbox`` may be given (already entered; the caller closes them); by default
    the orchestrator builds the model's client from its ``models[]`` entry (the key from
    ``env``, default ``os.environ``) and opens a :class:`~gocode.toolbox.Toolbox` for it.
    """

    def __init__(
        self,
        config: Config | str | os.PathLike[str],
        model: str | None = None,
        *,
        max_repairs: int = DEFAULT_MAX_REPAIRS,
        observer: Observer | None = None,
        client: ChatClient | None = None,
        toolbox: Toolbox | None = None,
        env: Mapping[str, str] | None = None,
        toolbox_options: dict[str, Any] | None = None,
    ) -> None:
        if max_repairs < 0:
            raise ValueError("max_repairs must be 0 or more")
        self.config = config if isinstance(config, Config) else load_config(Path(config))
        self.model = pick_model(self.config, model)
        self.max_repairs = max_repairs
        self.observer = observer
        self._client = client
        self._toolbox = toolbox
        self._env = env
        self._toolbox_options = toolbox_options or {}
        self._stack: contextlib.AsyncExitStack | None = None

    @property
    def client(self) -> ChatClient:
        if self._client is None:
            raise RuntimeError("enter the orchestrator first (async with)")
        return self._client

    @property
    def toolbox(self) -> Toolbox:
        if self._toolbox is None:
            raise RuntimeError("enter the orchestrator first (async with)")
        return self._toolbox

    async def __aenter__(self) -> Orchestrator:
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            if self._client is None:
                client = client_for(self.model, self._env)  # before the servers start: a missing key fails fast
                stack.push_async_callback(client.aclose)
                self._client = client
            if self._toolbox is None:
                box = Toolbox(self.config, self.model.ref, **self._toolbox_options)
                self._toolbox = await stack.enter_async_context(box)
        except BaseException:
            await stack.__aexit__(None, None, None)
            raise
        self._stack = stack
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.__aexit__(exc_type, exc, tb)

    # --- one prompt ---------------------------------------------------------------------------

    async def ask(self, prompt: str) -> Transcript:
        """Answer ``prompt``. Failures of the model or the code are in the transcript
        (``ok`` False, ``phase``, ``error``), never raised."""
        t = Transcript(
            prompt,
            {"ref": self.model.ref, "provider": self.model.type, "id": self.model.id},
            self.max_repairs,
        )
        start = time.monotonic()
        try:
            t.answer = await self._ask(prompt, t, start)
        except AttemptFailed as exc:
            t.phase, t.error = exc.phase, str(exc)
        except ModelError as exc:
            t.phase, t.error = "model", str(exc)
        t.duration_ms = (time.monotonic() - start) * 1000
        return t

    async def _ask(self, prompt: str, t: Transcript, start: float) -> str:
        code_mode = self.toolbox.code_mode
        package = code_mode.package
        names = render_names(package, NAMES_PER_SERVER).rstrip() or "(none: no tools are configured)"
        system = prompts.DECIDE.format(names=names)
        decide = await self._request(
            t, start, "decide", "asking whether the prompt needs tools", system, [Message("user", prompt)]
        )
        decision = prompts.read_decision(decide.reply or "")
        if decision.kind == "answer":
            if not decision.text:
                self._notify(decide, ok=False, summary="empty reply")
                raise AttemptFailed("model", "the model's reply was empty")
            self._notify(decide, summary="no tools needed: answered directly")
            return decision.text
        query = decision.text or prompt
        self._notify(decide, summary=f"needs tools: {query}")

        step = self._begin(t, start, Step("search", f"searching the tools for {query!r}", query=query))
        # The index (and the embedding model, on first use) is built off the event loop.
        found, misses = await anyio.to_thread.run_sync(select_tools, code_mode, query)
        if not found:
            self._end(step, ok=False, summary="; ".join(misses))
            raise AttemptFailed("tools", f"no tool for this request: {'; '.join(misses)}")
        step.tools = [e.function for e in found]
        self._end(step, summary="found " + ", ".join(step.tools))
        declarations = render_funcs(package, [e.func for e in found], ranked=True)

        system = prompts.WRITE.format(rules=code_mode.rules().rstrip())
        messages = [Message("user", prompts.write_request(prompt, declarations))]
        run: RunResult | None = None
        while True:
            title = (
                "asking for Go" if t.repairs == 0 else f"asking for a fix (repair {t.repairs} of {self.max_repairs})"
            )
            write = await self._request(t, start, "write", title, system, list(messages))
            messages.append(Message("assistant", write.reply or ""))
            written = prompts.read_code(write.reply or "")
            if written.cannot is not None:
                self._notify(write, ok=False, summary=f"the model declined: {written.cannot}")
                raise AttemptFailed("cannot", f"the model says the tools cannot do this: {written.cannot}")
            if written.code is None:
                self._notify(write, ok=False, summary="no ```go block in the reply")
                failure, feedback = "the model's reply had no Go code block", prompts.NO_CODE
            else:
                write.code = written.code
                self._notify(write, summary=f"{len(written.code.strip().splitlines())} lines of Go")
                run = await self._run(t, start, written.code)
                if run.ok:
                    break
                if run.phase == "setup":  # Go could not be set up here: no repair of the code helps
                    raise AttemptFailed("setup", run.stderr.strip())
                if run.phase == "approval":  # the person said no (or no one could say yes): not the code's fault
                    raise AttemptFailed("approval", run.error_message())
                failure = f"the program failed ({run.phase}): {_first_line(run.stderr) or run.phase}"
                feedback = prompts.repair_request(run.error_text())
            if t.repairs >= self.max_repairs:
                tries = (
                    f"after {t.repairs} repair{'s' if t.repairs != 1 else ''}" if t.repairs else "(no repairs allowed)"
                )
                raise AttemptFailed("code", f"no working program {tries}; last: {failure}")
            t.repairs += 1
            messages.append(Message("user", feedback))

        assert run is not None  # the loop ends only on a run that succeeded
        system = prompts.ANSWER
        answer = await self._request(
            t, start, "answer", "answering from the program's output", system,
            [Message("user", prompts.answer_request(prompt, run.output))],
        )  # fmt: skip
        if not (answer.reply or "").strip():
            self._notify(answer, ok=False, summary="empty reply")
            raise AttemptFailed("model", "the model's answer was empty")
        self._notify(answer, summary="answered")
        return (answer.reply or "").strip()

    async def _request(
        self, t: Transcript, start: float, kind: StepKind, title: str, system: str, messages: list[Message]
    ) -> Step:
        step = self._begin(t, start, Step(kind, title, system=system, messages=messages))
        try:
            reply: Reply = await self.client.complete(system, messages)
        except ModelError as exc:
            step.attempts, step.retry_waits_s = exc.attempts, exc.retry_waits_s
            self._end(step, ok=False, summary=str(exc))
            raise
        step.reply, step.usage, step.attempts, step.retry_waits_s = (
            reply.text, reply.usage, reply.attempts, reply.retry_waits_s,
        )  # fmt: skip
        self._end(step, notify=False)  # the caller reads the reply, then notifies
        return step

    async def _run(self, t: Transcript, start: float, code: str) -> RunResult:
        step = self._begin(t, start, Step("run", "building and running the program", code=code))
        run = await self.toolbox.execute(code)
        step.run = run
        timing = f"build {run.build_ms:.0f} ms, run {run.run_ms:.0f} ms"
        if run.ok:
            self._end(step, summary=f"ok ({timing}, {len(run.tool_calls)} tool calls)")
        else:
            self._end(step, ok=False, summary=f"{run.phase} error: {_first_line(run.stderr)}")
        return run

    def _begin(self, t: Transcript, start: float, step: Step) -> Step:
        step.started_ms = (time.monotonic() - start) * 1000
        t.steps.append(step)
        if self.observer is not None:
            self.observer.started(step)
        step.duration_ms = time.monotonic() * 1000  # the end replaces it with the duration
        return step

    def _end(self, step: Step, *, ok: bool = True, summary: str | None = None, notify: bool = True) -> None:
        step.duration_ms = time.monotonic() * 1000 - step.duration_ms
        if notify:
            self._notify(step, ok=ok, summary=summary)

    def _notify(self, step: Step, *, ok: bool = True, summary: str | None = None) -> None:
        step.ok = ok and step.ok
        if summary is not None:
            step.summary = summary
        if self.observer is not None:
            self.observer.finished(step)


def select_tools(code_mode: CodeMode, query: str) -> tuple[list[ToolEntry], list[str]]:
    """The tools for the tasks of a ``TOOLS:`` reply (``;``-separated), best first and each once,
    found as ``search_go_tools`` finds them; and why a task matched nothing."""
    found: dict[str, ToolEntry] = {}
    misses: list[str] = []
    for part in [q.strip() for q in query.split(";") if q.strip()] or [query]:
        arguments = {"query": part, "limit": TOOLS_PER_TASK}
        try:
            got = search_mod.answer(code_mode.search_index(), arguments, code_mode.view.excluded)
        except search_mod.SearchRequestError as exc:
            misses.append(str(exc))
            continue
        for e in got.found:
            found.setdefault(e.qualified, e)
    return list(found.values()), misses


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


class SyncOrchestrator:
    """:class:`Orchestrator` for code without an event loop; use it as a context manager::

    with SyncOrchestrator("gocode.yaml", "gpt") as o:
        print(o.ask("What's the weather where I am?").answer)
    """

    def __init__(self, config: Config | str | os.PathLike[str], model: str | None = None, **kwargs: Any) -> None:
        self._blocking = BlockingContext(Orchestrator(config, model, **kwargs))
        self._portal = self._blocking.portal
        self.orchestrator: Orchestrator = self._blocking.value

    def __enter__(self) -> SyncOrchestrator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._blocking.close()

    def ask(self, prompt: str) -> Transcript:
        return self._portal.call(self.orchestrator.ask, prompt)
