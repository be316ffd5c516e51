"""Go code run once from outside an agent: ``gocode exec``'s library.

:func:`exec_code` takes an :class:`ExecRequest` (the code, and how to run it), refuses options
that do not go together (:func:`check_request`, an :class:`~gocode.errors.ExecRequestError`
naming them as ``gocode exec`` spells them), takes the one way the request names, and answers
with an :class:`ExecOutcome`: the run's :class:`~gocode.run.result.RunResult`, or, for a plan
only, the tools the code can call (:class:`PlanOutcome`). A failure of the code is an answer;
gocode's own failures (config, discovery, a recording that is missing) are raised.

The ways, one per request:

- pooled (the default): a :class:`~gocode.toolbox.Toolbox` is the controller of this one run,
  and the program reaches the servers through its sessions (``dry_run``: every call answered
  by a stub shaped by the tool's output schema, no server called);
- direct (``mode="direct"``): the program starts or dials the servers itself, as a standalone
  program would (:class:`~gocode.codemode.CodeMode`);
- replay (``replay_id``): a recorded run built against its recorded tool set and answered from
  the recording, with no server started (:func:`~gocode.toolbox.replay_offline`);
- plan only (``plan_only``): the code type-checked, the tools it can call listed, nothing run.

A program held for approval (docs/approvals.md) runs when the request approves every tool it is
held for (``approved``: server.tool names, or ``"all"``), else when the person ``ask`` stands for
says yes (:func:`approver_for`); with neither, it is refused as before, naming the tools.

Nothing heavy is imported here at module level: a pooled run starts the config file's stdio
servers (:mod:`gocode.mcp.prestart`) before the config is read and the MCP SDK imported, so
that their start and gocode's own overlap.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from gocode.errors import ExecRequestError

if TYPE_CHECKING:
    from gocode.compile.modcache import Progress
    from gocode.config import Config
    from gocode.mcp.asker import Policy
    from gocode.program.plan import Plan
    from gocode.run.approvals import ApprovalRequest, Approver
    from gocode.run.result import RunResult

Mode = Literal["pooled", "direct"]
# The tools a request approves, as server.tool names, or every tool.
Approved = frozenset[str] | Literal["all"]
# A person asked whether a held program may run (blocking: it is called in a worker thread).
Ask = Callable[["ApprovalRequest"], bool]


def parse_approved(text: str) -> Approved:
    """``--approve``'s value: ``all``, or comma-separated server.tool names (a
    :class:`~gocode.errors.ExecRequestError` for anything else: a pattern or a bare name would
    approve more, or less, than the person meant)."""
    if text.strip() == "all":
        return "all"
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n.count(".") < 1 or n.startswith(".") or n.endswith(".") or set(n) & set("*?[] ")]
    if not names or bad:
        raise ExecRequestError(
            f"--approve takes `all` or comma-separated server.tool names (got {text!r}): "
            "each name exactly as the refusal lists it, no patterns"
        )
    return frozenset(names)


def approver_for(approved: Approved, ask: Ask | None) -> Approver | None:
    """The approver of a run from outside an agent: yes when ``approved`` covers every tool the
    program is held for (a program that may call any tool is held for every tool needing
    approval, listed after ``any tool``); else ``ask``'s answer; else a refusal naming what was
    not approved. None when there is neither (the run is refused as with no approver)."""
    if not approved and ask is None:
        return None
    from gocode.errors import NoApprover
    from gocode.run.approvals import ANY_TOOL

    async def decide(request: ApprovalRequest) -> bool:
        missing = [] if approved == "all" else [t for t in request.tools if t != ANY_TOOL and t not in approved]
        if not missing:
            return True
        if ask is None:
            raise NoApprover(f"--approve does not name {', '.join(missing)}")
        import anyio.to_thread

        return await anyio.to_thread.run_sync(ask, request)

    return decide


def check_request(*, has_code: bool, mode: Mode, replay_id: str | None, dry_run: bool, plan_only: bool) -> None:
    """Raise :class:`~gocode.errors.ExecRequestError` when these options do not make one request
    (a caller reading its code from a stream asks before it reads)."""
    if not has_code and replay_id is None:
        raise ExecRequestError("missing FILE|- (the Go code to run)")
    if mode == "direct" and (replay_id or dry_run):
        raise ExecRequestError("--direct cannot be combined with --replay or --dry-run (they need gocode's sessions)")
    if plan_only and (replay_id or dry_run or mode == "direct"):
        raise ExecRequestError("--plan runs nothing: it cannot be combined with --replay, --dry-run or --direct")


@dataclass(frozen=True)
class ExecRequest:
    """One piece of Go code to run once, and how. ``code`` may be None only with ``replay_id``
    (the recorded program is run then). ``timeout``: seconds before the program is killed
    (None: the model's ``codeMode.timeout``). Checked when made (:func:`check_request`)."""

    code: str | None
    model: str | None = None
    mode: Mode = "pooled"
    replay_id: str | None = None
    dry_run: bool = False
    plan_only: bool = False
    timeout: float | None = None
    approved: Approved = frozenset()  # tools approved up front (a held program naming only these runs)
    ask: Ask | None = field(default=None, compare=False)  # else the person to ask, if there is one
    # How a server's elicitation is answered (gocode.mcp.asker): ask the person at the terminal,
    # accept its defaults, decline; None: not declared. Each answer is one line on stderr.
    elicit: Policy | None = None

    @property
    def approver(self) -> Approver | None:
        return approver_for(self.approved, self.ask)

    def __post_init__(self) -> None:
        check_request(
            has_code=self.code is not None,
            mode=self.mode,
            replay_id=self.replay_id,
            dry_run=self.dry_run,
            plan_only=self.plan_only,
        )


@dataclass(frozen=True)
class PlanOutcome:
    """What a plan-only request found: the tools the code can call (``plan``), with the saved
    programs it calls every tool approving it lets run (``reach``), and the tools a run would
    be held for before it runs (``held``, docs/approvals.md); or, when the code does not
    check, the messages (``errors``, ``plan`` None)."""

    plan: Plan | None
    reach: Plan | None = None
    held: tuple[str, ...] = ()
    errors: str = ""

    @property
    def ok(self) -> bool:
        return self.plan is not None

    def text(self) -> str:
        """The plan for people, or the messages of code that does not check."""
        if self.plan is None:
            return self.errors.rstrip()
        text = self.plan.text()
        if self.reach is not None and self.reach != self.plan:
            text += f"\nwith the saved programs it calls: {self.reach.text()}"
        return text + (f"\nheld for approval: {', '.join(self.held)}" if self.held else "")

    def as_json(self) -> dict[str, Any]:
        if self.plan is None:
            return {"ok": False, "errors": self.errors}
        reach = self.reach if self.reach is not None else self.plan
        return {
            "ok": True,
            "plan": self.plan.as_json(),
            "reach": reach.as_json(),
            "held": bool(self.held),
            "needsApproval": list(self.held),
        }


@dataclass(frozen=True)
class ExecOutcome:
    """The answer to an :class:`ExecRequest`: ``run`` for a run (pooled, direct, replay, dry
    run), ``plan`` for a plan only; exactly one is set."""

    run: RunResult | None = None
    plan: PlanOutcome | None = None

    @property
    def ok(self) -> bool:
        if self.run is not None:
            return self.run.ok
        return self.plan is not None and self.plan.ok


async def exec_code(
    config: Config | str | os.PathLike[str] | None,
    request: ExecRequest,
    *,
    progress: Progress | None = None,
    warn: Progress | None = None,
) -> ExecOutcome:
    """Run ``request`` once against ``config`` (a parsed config, or a file: None is
    ``gocode.yaml`` in the working directory) and answer with what happened.

    ``progress`` hears what takes time (warming the module cache, starting servers); ``warn``
    hears each server a direct run could not discover (the others are used). Raises
    :class:`~gocode.errors.ConfigError`, :class:`~gocode.errors.DiscoveryError` or
    :class:`~gocode.errors.RecordingError` when gocode itself cannot run the request.
    """
    if request.mode == "pooled" and request.replay_id is None and not request.plan_only:
        assert request.code is not None  # the request's check
        return ExecOutcome(run=await _pooled(config, request, request.code, progress))
    from gocode.config import load_config

    parsed = _parsed(config)
    settled = parsed if parsed is not None else load_config(_path(config))
    if request.plan_only:
        assert request.code is not None
        return ExecOutcome(plan=await _plan(settled, request.model, request.code, progress))
    if request.replay_id is not None:
        from gocode.toolbox import replay_offline

        replayed = await replay_offline(settled, request.model, request.replay_id, request.timeout, request.code)
        return ExecOutcome(run=replayed)
    assert request.code is not None
    return ExecOutcome(run=await _direct(settled, request, request.code, progress, warn))


def _parsed(config: Config | str | os.PathLike[str] | None) -> Config | None:
    """``config`` when it is parsed already; None when it names a file."""
    return None if config is None or isinstance(config, str | os.PathLike) else config


def _path(config: Config | str | os.PathLike[str] | None) -> str | None:
    """The file ``config`` names (None: the default, ``gocode.yaml``, or a parsed config)."""
    return os.fspath(config) if isinstance(config, str | os.PathLike) else None


async def _pooled(
    config: Config | str | os.PathLike[str] | None, request: ExecRequest, code: str, progress: Progress | None
) -> RunResult:
    from gocode.mcp.prestart import commands_in_file, prestarted

    # This call is the controller for its one run: its sessions serve the program. Given a
    # file, its stdio servers start first, as the file names them, so that their start and
    # gocode's own (reading the config, importing the MCP SDK and the rest) happen at once.
    parsed = _parsed(config)
    async with prestarted(commands_in_file(_path(config)) if parsed is None else {}):
        from gocode.config import load_config

        settled = parsed if parsed is not None else load_config(_path(config))
        settled.code_mode_for(request.model)  # an unknown model ref: said before the SDK is loaded
        from gocode.mcp.asker import answering
        from gocode.toolbox import Toolbox

        approve = request.approver
        with answering(request.elicit) as asker:
            async with Toolbox(settled, request.model, prewarm=False, progress=progress, approve=approve) as box:
                # The person (or the script's choice) is the client its servers may ask.
                return await box.runs.execute(code, request.timeout, dry_run=request.dry_run, caller=asker)


async def _direct(
    config: Config, request: ExecRequest, code: str, progress: Progress | None, warn: Progress | None
) -> RunResult:
    from gocode.codemode import CodeMode
    from gocode.mcp.asker import answering
    from gocode.mcp.elicitchannel import elicit_channel

    cm = CodeMode(config, request.model)
    await cm.refresh()
    if warn is not None:
        for _, exc in sorted(cm.discovery.failures.items() if cm.discovery else ()):
            warn(str(exc))
    with answering(request.elicit) as asker:
        if asker is None:  # nobody to ask: the program declares no elicitation
            return await cm.execute(code, request.timeout, progress=progress, approve=request.approver)
        # Its servers' questions come to this asker; only the servers it has sessions with ask.
        async with elicit_channel(asker, cm.server_specs()) as env:
            return await cm.execute(code, request.timeout, progress=progress, approve=request.approver, program_env=env)


async def _plan(config: Config, model: str | None, code: str, progress: Progress | None) -> PlanOutcome:
    from gocode.codemode import CodeMode
    from gocode.tools.saved import expand_plan

    cm = CodeMode(config, model, offer_saved=True)  # as a pooled run offers them (with codeMode.savedPrograms on)
    await cm.refresh()
    got = await cm.plan(code, progress=progress)
    if got.plan is None:
        return PlanOutcome(None, errors=got.output)
    # What approving it means: the tools the saved programs it calls can reach, and what a run
    # would be held for (docs/approvals.md).
    reach = expand_plan(got.plan, cm.saved_programs)
    return PlanOutcome(got.plan, reach=reach, held=cm.held_for(got.plan))
