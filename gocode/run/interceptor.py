"""Recorded tool calls and the layer that intercepts a program's calls on the loopback endpoint.

Every call a pooled program makes reaches the controller's loopback endpoint, which hands it to
the run's :class:`Interceptor`. The interceptor gives the call a **position** and then either

- answers it from a record of an earlier pass or run (nothing reaches a server),
- holds it as *pending* when the tool is client-owned and no result is known yet, or
- passes it to its server (``forward``) and records the result.

Position: ``server.tool`` plus a hash of the canonical JSON arguments plus ``n``, the number
of earlier calls with the same tool and arguments in this run ("the 2nd ``get_weather`` for
Paris"). A run-wide sequence number is not deterministic once goroutines call concurrently;
this key is, whatever order goroutines reach the endpoint in, as long as the program itself is
deterministic given its tool results. What breaks it: two concurrent calls with the *same*
tool and arguments whose recorded results differ (which goroutine gets which result may swap),
and a program whose calls depend on anything but its tool results (the clock, randomness,
the environment, files, map iteration order feeding a call). See docs/replay.md.

Modes (:data:`Mode`): ``live`` forwards and records (every pooled run); ``replay`` answers only
from the record and refuses any other call (``gocode exec --replay``: no server is touched);
``dry-run`` answers new calls with stubs shaped by the tools' output schemas; ``step`` answers
from the record, forwards new MCP calls, and leaves new client-owned calls pending (the stateless
step protocol, :mod:`gocode.run.step`).

One interceptor serves one pass of one program; it lives on the controller's event loop and is
not shared between threads.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import anyio
import mcp_types as types
from pydantic import ValidationError

from gocode.errors import ReplayError
from gocode.mcp.intercept import Forward, IdleReport
from gocode.toolset import ToolInfo

Mode = Literal["live", "replay", "dry-run", "step"]

# A result bigger than this is recorded without its content (replaying it is refused, by name).
MAX_RESULT_BYTES = 1024 * 1024


def canonical(arguments: Any) -> str:
    """The arguments as canonical JSON (sorted keys, no spaces): what a position hashes."""
    return json.dumps(arguments if arguments is not None else {}, sort_keys=True, separators=(",", ":"))


def args_hash(arguments: Any) -> str:
    return hashlib.sha256(canonical(arguments).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Position:
    """Where a call sits in a run: its tool, its arguments' hash, and ``n`` identical calls before it."""

    server: str
    tool: str
    args: str
    n: int

    def __str__(self) -> str:
        return f"{self.server}.{self.tool}/{self.args}#{self.n}"

    @property
    def id(self) -> str:
        """A short id from the position alone (a step makes it unique to its run: State.call_id)."""
        raw = f"{self.server}\0{self.tool}\0{self.args}\0{self.n}"
        return "call_" + hashlib.sha256(raw.encode()).hexdigest()[:20]


@dataclass
class Entry:
    """One recorded call: the tool, its arguments and its result (MCP ``CallToolResult`` wire JSON).

    ``result`` is None for a call still pending (client-owned, not answered yet) or one whose
    result was too big to keep (``dropped`` says so). ``digest``: the arguments' hash, when the
    arguments themselves were too big to keep (``arguments`` is then None; the position stays).
    """

    server: str
    tool: str
    arguments: Any
    n: int
    result: dict[str, Any] | None = None
    dropped: bool = False
    digest: str | None = None

    @property
    def position(self) -> Position:
        return Position(self.server, self.tool, self.digest or args_hash(self.arguments), self.n)

    def describe(self) -> str:
        """The call as a reader knows it: ``tool({"a":1})`` and its position."""
        nth = f", the {_ordinal(self.n + 1)} with these arguments" if self.n else ""
        args = "<arguments too large to keep>" if self.digest else canonical(self.arguments)[:300]
        return f"{self.tool}({args}) (server {self.server}, position {self.position}{nth})"

    def slim(self) -> Entry:
        """This call without its result, and without its arguments too when ``arguments`` is
        set: what a recording keeps of it past its cap."""
        digest = self.digest or args_hash(self.arguments)
        return Entry(self.server, self.tool, None, self.n, None, dropped=True, digest=digest)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"server": self.server, "tool": self.tool, "arguments": self.arguments, "n": self.n}
        if self.digest:
            out["argumentsDigest"] = self.digest
            del out["arguments"]
        if self.result is not None:
            out["result"] = self.result
        if self.dropped:
            out["dropped"] = True
        return out

    @classmethod
    def from_json(cls, doc: Any) -> Entry:
        if not isinstance(doc, dict) or not isinstance(doc.get("server"), str) or not isinstance(doc.get("tool"), str):
            raise ValueError(f"not a recorded call: {str(doc)[:200]}")
        n = doc.get("n", 0)
        result = doc.get("result")
        if (
            isinstance(n, bool)
            or not isinstance(n, int)
            or n < 0
            or (result is not None and not isinstance(result, dict))
            or not (doc.get("argumentsDigest") is None or re.fullmatch(r"[0-9a-f]{16}", str(doc["argumentsDigest"])))
        ):
            raise ValueError(f"not a recorded call: {str(doc)[:200]}")
        digest = doc.get("argumentsDigest")
        return cls(doc["server"], doc["tool"], doc.get("arguments"), n, result, bool(doc.get("dropped")), digest)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def wire(result: types.CallToolResult) -> dict[str, Any]:
    return result.model_dump(by_alias=True, exclude_none=True, mode="json")


def decode(entry: Entry) -> types.CallToolResult:
    """A recorded result as a ``CallToolResult``, or a :class:`ReplayError` naming the call."""
    if entry.dropped or entry.result is None:
        raise ReplayError(f"the recorded result of {entry.describe()} was too large to keep; it cannot be replayed")
    try:
        return types.CallToolResult.model_validate(entry.result)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ReplayError(
            f"the recorded result of {entry.describe()} no longer decodes as a tool result: {where}: {first['msg']}"
        ) from None


def text_result(text: str, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)


def value_result(value: Any, is_error: bool = False) -> types.CallToolResult:
    """A plain value as a tool result: text as text; anything else as JSON (structured if an object)."""
    if is_error:
        return text_result(value if isinstance(value, str) else json.dumps(value), True)
    if isinstance(value, str):
        return text_result(value)
    text = json.dumps(value)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=value if isinstance(value, dict) else None,
    )


def stub(tool: ToolInfo | None, schema_depth: int = 8) -> types.CallToolResult:
    """A dry run's answer: a value shaped by the tool's output schema (zero values), else a note."""
    if tool is None or not tool.output_schema:
        name = tool.name if tool is not None else "tool"
        return text_result(f"[dry run: {name} was not called]")
    return value_result(_zero(tool.output_schema, tool.output_schema, schema_depth))


def _zero(schema: Any, root: Any, depth: int) -> Any:
    if not isinstance(schema, dict) or depth <= 0:
        return None
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        return _zero(target, root, depth - 1)
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            typed = [o for o in options if isinstance(o, dict) and o.get("type") != "null"]
            return _zero((typed or options)[0], root, depth - 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or (kind is None and "properties" in schema):
        props = p if isinstance(p := schema.get("properties"), dict) else {}
        return {k: _zero(v, root, depth - 1) for k, v in props.items()}
    return {"string": "", "integer": 0, "number": 0, "boolean": False, "array": []}.get(kind or "")


@dataclass
class Pending:
    """A client-owned call the program waits on (answered by the caller of the next step)."""

    entry: Entry

    @property
    def id(self) -> str:
        return self.entry.position.id

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.entry.tool, "arguments": self.entry.arguments}


class Budget(Protocol):
    """A bound on what a pass may record (a step's continuation), asked before each side effect."""

    def admit(self, calls: list[Entry], pending: list[Entry]) -> str | None:
        """None when a record of ``calls`` and ``pending`` stays within the bound, else why not."""

    def placeholder(self, entry: Entry) -> Entry:
        """What ``entry`` is recorded as when its result does not fit: a small, fixed-size error."""


@dataclass
class Interceptor:
    """Answers, holds or forwards one pass's calls (see the module docstring).

    ``recorded``: results known from earlier passes or the run being replayed. ``client``:
    the (server, tool) pairs the caller owns. ``tools``: every tool by (server, tool), for
    dry-run stubs. ``max_bytes``: the recording's cap, arguments included: past it a call is kept
    without its result (``dropped``), then without its arguments (their hash), and once even
    that does not fit, not at all (``not_kept`` counts them; a replay then stops at the first).
    """

    mode: Mode
    recorded: list[Entry] = field(default_factory=list)
    client: frozenset[tuple[str, str]] = frozenset()
    tools: dict[tuple[str, str], ToolInfo] = field(default_factory=dict)
    max_bytes: int = 16 * MAX_RESULT_BYTES
    calls: list[Entry] = field(default_factory=list)  # this pass, in the order results were known
    pending: list[Pending] = field(default_factory=list)
    failure: str | None = None
    size: int = 0
    # A step's continuation bound. A new server call is made only when the record stays within it
    # even if the call's result must be replaced by the budget's placeholder (reserved while the
    # call is in flight); a result that does not fit is recorded as that placeholder. So the pass
    # always ends with a record that fits: no side effect is ever made that cannot be resumed from.
    budget: Budget | None = None
    # Once the budget refused a call, every later new call is refused with the same reason, at
    # once (a refusal has no side effect to wait for): a step carries it to its later passes, so
    # the program sees the same answers on every pass.
    refusal: str | None = None
    not_kept: int = 0

    def __post_init__(self) -> None:
        self._known = {e.position: e for e in self.recorded}
        self._unused = dict(self._known)  # recorded positions not asked for yet in this pass
        self._counts: dict[tuple[str, str, str], int] = {}
        self._replayed = anyio.Event()
        if not self._unused:
            self._replayed.set()
        self.in_flight = 0  # forwarded calls not answered yet
        self.held = 0  # new calls waiting for the record to be replayed
        self.received = 0  # calls that reached this interceptor
        self.report: IdleReport | None = None  # the program's latest report of its state (a step pass)
        self._reserved: list[Entry] = []  # the budget's placeholders for calls in flight
        self._waiting: list[Entry] = []
        self.last_event = time.monotonic()  # the last call, answer, failure or busy report
        self.last_call = self.last_event  # the last call, answer or failure
        self.changed = anyio.Event()  # set on every call, answer, failure or report (for the step driver)
        self._closed = anyio.Event()

    def close(self) -> None:
        """End the pass: calls still held or pending are answered with an error (the program is gone)."""
        self._closed.set()
        self._replayed.set()

    def _touch(self) -> None:
        self.last_event = self.last_call = time.monotonic()
        self._wake()

    def _wake(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    def idle(self, report: IdleReport) -> None:
        """The program's report of its state. A busy program counts as an event: the grace
        period starts again, so a pass is not ended under a goroutine that computes."""
        self.report = report
        if report.verdict == "busy":
            self.last_event = time.monotonic()
        self._wake()

    def settled(self) -> bool:
        """Whether the program can only wait for the calls held here: its last report says every
        goroutine waits on a call or on another goroutine, every call it had started has
        arrived here, and the ones it waits on are exactly those held (nothing in flight, none
        answered since it looked). The counts make a stale or forged report harmless: at worst
        the pass ends with the held calls, which a grace period would have ended it with too."""
        r, waiting = self.report, len(self.pending) + self.held
        return (
            r is not None
            and r.verdict == "idle"
            and waiting > 0
            and self.in_flight == 0
            and r.started == self.received
            and r.started - r.finished == waiting
        )

    def position(self, server: str, tool: str, arguments: Any) -> Position:
        digest = args_hash(arguments)
        key = (server, tool, digest)
        n = self._counts.get(key, 0)
        self._counts[key] = n + 1
        return Position(server, tool, digest, n)

    @property
    def unused(self) -> list[Entry]:
        """Recorded calls this pass has not made (in recorded order): a divergence once it is quiet."""
        return list(self._unused.values())

    def fail(self, message: str) -> types.CallToolResult:
        if self.failure is None:
            self.failure = message
        self._touch()
        return text_result(f"gocode: {message}", True)

    async def call(self, server: str, tool: str, arguments: Any, forward: Forward | None) -> types.CallToolResult:
        """The answer to one call the program made (``forward`` reaches its server, if it has one)."""
        pos = self.position(server, tool, arguments)
        self.received += 1
        self._touch()
        known = self._known.get(pos)
        if known is not None:
            self._unused.pop(pos, None)
            if not self._unused:
                self._replayed.set()
            try:
                result = decode(known)
            except ReplayError as exc:
                return self.fail(str(exc))
            self._keep(known)
            return result
        entry = Entry(server, tool, arguments, pos.n)
        if self.failure is not None:
            return text_result(f"gocode: {self.failure}", True)
        if self.mode == "replay":
            return self.fail(
                f"replay diverged: the call {entry.describe()} is not in the recording{self._instead(pos)}"
            )
        if self.mode == "dry-run":
            return self._answer(entry, stub(self.tools.get((server, tool))))
        if self.mode == "step":
            if self.refusal is not None:
                return text_result(f"gocode: {self.refusal}; the call {entry.describe()} was not made", True)
            # New calls wait until every recorded call was made again: a program that took
            # another path is stopped before a new call reaches a server (see Stepper).
            if not self._replayed.is_set():
                self.held += 1
                self._waiting.append(entry)
                try:
                    await self._replayed.wait()
                finally:
                    self.held -= 1  # _waiting keeps it: a divergence message names what was held
            self._touch()
            if self.failure is not None or self._closed.is_set():
                return text_result(f"gocode: {self.failure or 'the pass ended'}", True)
            if (server, tool) in self.client:
                if (refusal := self._over_budget([], [entry])) is not None:
                    return self._refuse(refusal, entry)
                self.pending.append(Pending(entry))
                self._touch()
                await self._closed.wait()  # the pass ends here; the caller runs the tool
                return text_result("gocode: the pass ended before this client call was answered", True)
        if forward is None:
            return self.fail(f"{server}.{tool} has no server to call")
        reserved = self.budget.placeholder(entry) if self.budget is not None else None
        if reserved is not None:
            if (refusal := self._over_budget([reserved], [])) is not None:
                return self._refuse(refusal, entry)
            self._reserved.append(reserved)
        self.in_flight += 1
        try:
            result = await forward()
        finally:
            self.in_flight -= 1
            if reserved is not None:
                self._reserved.remove(reserved)
            self._touch()
        if reserved is not None and self._over_budget([Entry(server, tool, arguments, pos.n, wire(result))], []):
            self._keep(reserved)  # the call was made; the program is told its result could not be kept
            return decode(reserved)
        return self._answer(entry, result)

    def _refuse(self, refusal: str, entry: Entry) -> types.CallToolResult:
        self.refusal = self.refusal or refusal
        return text_result(f"gocode: {self.refusal}; the call {entry.describe()} was not made", True)

    def _over_budget(self, calls: list[Entry], pending: list[Entry]) -> str | None:
        """Why the record plus ``calls`` and ``pending`` would not fit the budget (None: it would).
        Recorded calls not made again yet count too: the record ends with them."""
        if self.budget is None:
            return None
        known = [*self.calls, *self._unused.values(), *self._reserved, *calls]
        return self.budget.admit(known, [*(p.entry for p in self.pending), *pending])

    def _instead(self, pos: Position) -> str:
        same = [e for e in self._unused.values() if (e.server, e.tool) == (pos.server, pos.tool)]
        if same:
            return f"; the recording has {same[0].describe()} instead"
        return ""

    def _answer(self, entry: Entry, result: types.CallToolResult) -> types.CallToolResult:
        entry.result = wire(result)
        self._keep(entry)
        return result

    def _keep(self, entry: Entry) -> None:
        size = len(canonical(entry.as_json()))
        if entry.result is not None and (size > MAX_RESULT_BYTES or self.size + size > self.max_bytes):
            entry = Entry(entry.server, entry.tool, entry.arguments, entry.n, None, dropped=True, digest=entry.digest)
            size = len(canonical(entry.as_json()))
        if size > MAX_RESULT_BYTES or self.size + size > self.max_bytes:  # the arguments are what is large
            entry = entry.slim()
            size = len(canonical(entry.as_json()))
        if self.size + size > self.max_bytes:
            self.not_kept += 1
            return
        self.size += size
        self.calls.append(entry)

    def divergence(self) -> str | None:
        """The error for a pass that went quiet (or ended) with recorded calls it never made again."""
        if not self._unused:
            return None
        first = next(iter(self._unused.values()))
        made = [
            *self._waiting,
            *(e for e in self.calls if e.position not in self._known),
            *(p.entry for p in self.pending),
        ]
        instead = f"; instead it called {made[0].describe()}" if made else ""
        return (
            f"replay diverged: the program no longer makes the recorded call {first.describe()}"
            f"{instead}. A program replayed across passes must make "
            "the same calls given the same results: do not let calls depend on the clock, randomness or map order"
        )
