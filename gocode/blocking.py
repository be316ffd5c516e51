"""The toolbox for code without an event loop: :class:`SyncToolbox`, and
:class:`BlockingContext`, which runs any async context manager in an event loop on a
background thread (the agent's :class:`~gocode.agent.orchestrator.SyncOrchestrator` uses it too)."""

from __future__ import annotations

import functools
import os
from typing import Any

import anyio.from_thread
import mcp_types as types

from gocode.config import Config
from gocode.results import ToolResult
from gocode.run import step as stepping
from gocode.run.runner import RunResult
from gocode.toolbox import Toolbox


class BlockingContext:
    """An async context manager entered in an event loop on a background thread (an anyio
    blocking portal), for code without a loop of its own. ``value`` is what it entered as;
    ``portal.call`` runs its coroutines; :meth:`close` leaves it (once) and stops the loop."""

    def __init__(self, manager: Any) -> None:
        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        try:
            # Entered and left in one task of the portal, as a task group inside it requires.
            self._entered = self.portal.wrap_async_context_manager(manager)
            self.value = self._entered.__enter__()
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise
        self._closed = False

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self._entered.__exit__(None, None, None)
            finally:
                self._portal_cm.__exit__(None, None, None)


class SyncToolbox:
    """:class:`Toolbox` for code without an event loop: the same methods, blocking.

    The toolbox lives in an event loop on a background thread (an anyio blocking portal);
    use it as a context manager, or call :meth:`close`::

        with SyncToolbox("gocode.yaml", model="gpt-5") as tools:
            print(tools.call("execute_go_code", {"code": 'fmt.Println("hi")'}).text)
    """

    def __init__(self, config: Config | str | os.PathLike[str], model: str | None = None, **kwargs: Any) -> None:
        self._blocking = BlockingContext(Toolbox(config, model, **kwargs))
        self._portal = self._blocking.portal
        self.toolbox: Toolbox = self._blocking.value

    def __enter__(self) -> SyncToolbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._blocking.close()

    def tools(self) -> list[types.Tool]:
        return self.toolbox.tools()

    def definitions(self, fmt: str = "mcp") -> list[dict[str, Any]]:
        return self.toolbox.definitions(fmt)

    def call(self, name: str, arguments: dict[str, Any] | str | None = None) -> ToolResult:
        return self._portal.call(self.toolbox.call, name, arguments)

    def execute(self, code: str, timeout: float | None = None, *, dry_run: bool = False) -> RunResult:
        return self._portal.call(functools.partial(self.toolbox.execute, code, timeout, dry_run=dry_run))

    def replay(self, run_id: str, timeout: float | None = None, code: str | None = None) -> RunResult:
        return self._portal.call(self.toolbox.replay, run_id, timeout, code)

    def step(
        self,
        code: str,
        tools: list[Any],
        continuation: str | None = None,
        results: list[Any] | None = None,
        timeout: float | None = None,
    ) -> stepping.StepResult:
        return self._portal.call(self.toolbox.step, code, tools, continuation, results, timeout)

    def step_declarations(self, tools: list[Any]) -> stepping.Declarations:
        return self._portal.call(self.toolbox.step_declarations, tools)

    def set_up(self, within: float | None = None) -> bool:
        """Wait for the machine's one-off set-up (see :meth:`Toolbox.set_up`)."""
        return self._portal.call(self.toolbox.set_up, None, within)

    def wait_warm(self) -> None:
        self._portal.call(self.toolbox.wait_warm)
