"""The stateless step protocol: client-owned tools, answered by the caller between passes.

A caller hands gocode a program, the tools it owns (name, description, JSON Schemas) and,
after the first pass, the continuation it got back plus its answers. gocode runs the program
from the top; every call already known (client *and* MCP, from the continuation) is answered
from it; new MCP calls go to their servers once every known call was made again; new client
calls are held. The pass ends when the program can only wait for the held calls: its runtime
says so (every goroutine waits on a call or on another goroutine, and the calls it waits on are
the ones held: :meth:`Interceptor.settled`), or, where the program cannot tell (a goroutine
sleeps or waits on I/O of its own), when it is *quiet* (no forwarded call in flight, at least
one call held, and no new call, nor a report that it computes, for ``grace`` seconds; reports
that it computes hold a pass at most ``GOCODE_STEP_BUSY`` seconds after its last call). The held
client calls are the batch the caller must run, in a deterministic order (tool, arguments,
occurrence). If the program stopped with known calls it never made again, it diverged: the pass
stops before any new call reached a server, with an error naming the call.

The continuation is everything the next pass needs (the program's hash, the tool set's digest,
the calls and their results, the pending calls, the run's nonce that makes their ids unique,
a refusal of the bound), compressed, sealed with AES-256-GCM under a
server-side key (encrypted and authenticated: the caller holds results of server tools the
program may never have printed, and must read none of them), and bounded in size: a pass makes
no server call it could not carry to the next (:class:`Bound`). gocode keeps nothing between passes. See docs/stateless.md.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gocode.errors import StepError
from gocode.mcp.nesting import SCHEMA_DEPTH, deeper_than
from gocode.paths import cache_dir, state_dir
from gocode.run.interceptor import Entry, Interceptor, Pending, args_hash, text_result, value_result, wire
from gocode.run.runner import RunResult
from gocode.toolset import ServerTools, ToolInfo

STEP_TOOL_NAME = "step_go_code"
CLIENT_SERVER = "@client"  # no configured server can have this name (they start with a letter or digit)
PREFIX = "gcs2"  # the format: AES-256-GCM over the compressed state (gcs1 was signed, not encrypted)
NONCE_BYTES = 12  # random per continuation (AES-GCM's standard nonce)
_KEY_INFO = b"gocode step continuation gcs2"  # the AEAD key is derived from the configured secret
_FORMAT = re.compile(r"^gcs(\d+)\.")
DEFAULT_MAX_BYTES = 1024 * 1024  # GOCODE_STEP_MAX_CONTINUATION
DEFAULT_TTL_S = 24 * 3600.0  # GOCODE_STEP_TTL
DEFAULT_GRACE_S = 0.3  # GOCODE_STEP_GRACE
DEFAULT_BUSY_S = 10.0  # GOCODE_STEP_BUSY
# Set on a step pass's program (to the grace period): its runtime then reports whether it can go
# on (go_templates/rt/idle.go, EnvIdle).
IDLE_ENV = "GOCODE_STEP_IDLE"
MAX_CLIENT_TOOLS = 64
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


class ClientTool(BaseModel):
    """A tool the caller owns: it becomes a typed Go function; its calls come back to the caller."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    name: str = Field(pattern=_NAME.pattern)
    description: str = Field("", max_length=4000)
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"}, alias="inputSchema")
    output_schema: dict[str, Any] | None = Field(None, alias="outputSchema")

    def info(self) -> ToolInfo:
        return ToolInfo(CLIENT_SERVER, self.name, self.description, self.input_schema, self.output_schema)


class Answer(BaseModel):
    """The caller's result for one pending call: a value (text or JSON), or an error message."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    id: str
    result: Any = None
    is_error: bool = Field(False, alias="isError")


def client_tools(tools: list[Any]) -> ServerTools:
    """The caller's tool declarations as the ``@client`` server (a :class:`StepError` when malformed)."""
    if not isinstance(tools, list):
        raise StepError("`tools` must be a list of {name, description, inputSchema, outputSchema}")
    if len(tools) > MAX_CLIENT_TOOLS:
        raise StepError(f"at most {MAX_CLIENT_TOOLS} client tools (got {len(tools)})")
    parsed: list[ClientTool] = []
    for i, t in enumerate(tools):
        try:
            parsed.append(t if isinstance(t, ClientTool) else ClientTool.model_validate(t))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(the tool)"
            raise StepError(f"client tool #{i + 1}: {where}: {first['msg']}") from None
    for t in parsed:
        if deeper_than(t.input_schema, SCHEMA_DEPTH) or deeper_than(t.output_schema, SCHEMA_DEPTH):
            raise StepError(f"client tool {t.name!r}: its schema is nested deeper than {SCHEMA_DEPTH} levels")
    names = [t.name for t in parsed]
    if dup := sorted({n for n in names if names.count(n) > 1}):
        raise StepError(f"client tools declared twice: {', '.join(dup)}")
    return ServerTools(CLIENT_SERVER, tuple(t.info() for t in sorted(parsed, key=lambda t: t.name)))


# --- the continuation ---------------------------------------------------------------------------


def key() -> bytes:
    """The continuation secret: ``GOCODE_STEP_KEY`` if set, else one generated once in the state
    dir (0600); the AEAD key is derived from it (:func:`_aead`).

    Replicas behind a load balancer must share it (set the variable, or share the state dir).
    """
    if env := os.environ.get("GOCODE_STEP_KEY"):
        return hashlib.sha256(env.encode()).digest()
    path = (state_dir() or cache_dir()) / "step.key"
    try:
        if path.stat().st_mode & 0o077:  # whoever reads it can open every continuation: its owner's only
            path.chmod(0o600)
        return bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = secrets.token_bytes(32)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(fresh.hex())
    try:
        os.link(tmp, path)  # first writer wins; a racing process reads the winner's key
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return bytes.fromhex(path.read_text().strip())


def program_hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


@dataclass
class State:
    """What a continuation carries."""

    program: str  # sha256 of the code
    tools: str  # digest of the tool set (servers and client tools)
    calls: list[Entry] = field(default_factory=list)
    pending: list[Entry] = field(default_factory=list)
    passes: int = 0
    issued: float = field(default_factory=time.time)
    # Drawn at a run's first pass and carried to its last: it makes the calls' ids unique to the
    # run (the same program run twice must not give a chat transcript the same tool-call ids).
    run: str = field(default_factory=lambda: secrets.token_hex(16))
    # Why the bound refused a call in an earlier pass (the interceptor's ``refusal``): every new
    # call of later passes is refused the same way.
    refused: str = ""

    def call_id(self, entry: Entry) -> str:
        """The id a caller answers a pending call with: the call's position (stable across the
        passes of this run) combined with the run's nonce."""
        if not self.run:  # a continuation sealed before runs had a nonce
            return entry.position.id
        raw = f"{self.run}\0{entry.position}"
        return "call_" + hashlib.sha256(raw.encode()).hexdigest()[:20]

    def as_json(self) -> dict[str, Any]:
        return {
            "v": 2,
            "run": self.run,
            "refused": self.refused,
            "program": self.program,
            "tools": self.tools,
            "calls": [c.as_json() for c in self.calls],
            "pending": [p.as_json() for p in self.pending],
            "passes": self.passes,
            "issued": self.issued,
        }


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def max_bytes() -> int:
    return int(os.environ.get("GOCODE_STEP_MAX_CONTINUATION", DEFAULT_MAX_BYTES))


def _aead(secret: bytes) -> AESGCM:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_KEY_INFO).derive(secret)
    return AESGCM(derived)


def _payload(state: State) -> bytes:
    return zlib.compress(json.dumps(state.as_json(), separators=(",", ":")).encode(), 6)


def _sealed_length(payload: int) -> int:
    """The length of a continuation whose compressed state is ``payload`` bytes."""
    raw = NONCE_BYTES + payload + 16  # the nonce, the ciphertext, AES-GCM's tag
    return len(PREFIX) + 1 + (raw * 4 + 2) // 3  # base64url without padding


def batch_order(entry: Entry) -> tuple[str, str, int]:
    """The order pending calls are handed to the caller (and sealed in) by: tool, arguments, occurrence."""
    return (entry.tool, json.dumps(entry.arguments, sort_keys=True), entry.n)


TOO_LARGE = (
    "gocode: the call was made, but its result is too large to carry to the next pass "
    "(GOCODE_STEP_MAX_CONTINUATION); it was not kept"
)


@dataclass
class Bound:
    """The interceptor's budget for a step pass: the next continuation stays within ``limit``.

    A new server call is made only if the continuation fits with the call's :meth:`placeholder`
    in place of its result, and a result that then does not fit is recorded as the placeholder:
    every pass ends with a continuation to resume from, never after a side effect it cannot
    carry. A client call is held only if the continuation fits with it pending. The sizes are
    exact (the state compressed as it would be sealed), plus :attr:`slack` for the order the
    calls end up in and the time stamp.
    """

    state: State
    limit: int

    @property
    def worst(self) -> str:
        """A refusal message as long as any this bound gives (sized in as if one were carried)."""
        return self.refusal(10**12)

    def refusal(self, size: int) -> str:
        return (
            f"the continuation would be over {size} bytes, past the bound of {self.limit} "
            "(GOCODE_STEP_MAX_CONTINUATION), with the results of the calls made so far"
        )

    @classmethod
    def of(cls, state: State, limit: int | None = None) -> Bound:
        return cls(state, max_bytes() if limit is None else limit)

    @property
    def slack(self) -> int:
        return 64 + self.limit // 100

    def size(self, calls: list[Entry], pending: list[Entry]) -> int:
        s = self.state
        entries = sorted(pending, key=batch_order)
        nxt = State(s.program, s.tools, list(calls), entries, s.passes + 1, run=s.run, refused=s.refused or self.worst)
        return _sealed_length(len(_payload(nxt)))

    def admit(self, calls: list[Entry], pending: list[Entry]) -> str | None:
        size = self.size(calls, pending) + self.slack
        return None if size <= self.limit else self.refusal(size)

    def placeholder(self, entry: Entry) -> Entry:
        digest = entry.digest or args_hash(entry.arguments)  # the arguments may be what is large
        return Entry(entry.server, entry.tool, None, entry.n, wire(text_result(TOO_LARGE, True)), digest=digest)

    def check(self, known: list[Entry]) -> None:
        """Refuse, before anything runs, a pass whose known calls (the caller's answers
        included) already leave no room: the caller can answer the same continuation again."""
        size = self.size(known, []) + self.slack
        if size > self.limit:
            raise StepError(
                f"the answers make the continuation {size} bytes, past the bound of {self.limit} "
                "(GOCODE_STEP_MAX_CONTINUATION); nothing ran: answer the same continuation again with smaller results"
            )


def encode(state: State, secret: bytes, limit: int | None = None) -> str:
    """The state sealed: ``gcs2.<base64url(nonce ‖ AES-256-GCM(zlib(JSON)) ‖ tag)>``, the prefix
    authenticated too; a :class:`StepError` when it is over the size bound."""
    payload = _payload(state)
    nonce = secrets.token_bytes(NONCE_BYTES)
    sealed = _aead(secret).encrypt(nonce, payload, PREFIX.encode())
    token = f"{PREFIX}.{_b64(nonce + sealed)}"
    limit = max_bytes() if limit is None else limit
    if len(token) > limit:
        raise StepError(
            f"the continuation would be {len(token)} bytes, over the bound of {limit} "
            "(GOCODE_STEP_MAX_CONTINUATION): the program's tool results are too large to carry between passes"
        )
    return token


def decode(
    token: str, secret: bytes, program: str, tools: str, *, limit: int | None = None, ttl: float | None = None
) -> State:
    """A continuation checked and opened; a :class:`StepError` saying why when it is refused."""
    limit = max_bytes() if limit is None else limit
    if not isinstance(token, str) or len(token) > limit:
        raise StepError(f"continuation refused: not a string of at most {limit} bytes")
    if (known := _FORMAT.match(token)) is None:
        raise StepError(f"continuation refused: not a gocode continuation (expected {PREFIX}.<sealed state>)")
    if known.group(0) != PREFIX + ".":
        raise StepError(
            f"continuation refused: it is in the format {known.group(0)[:-1]}, which this gocode does not read "
            f"(it reads {PREFIX}; a continuation from an older or newer gocode has expired): start the program again"
        )
    try:
        blob = _unb64(token[len(PREFIX) + 1 :])
    except ValueError:
        raise StepError("continuation refused: it is not base64url") from None
    try:
        nonce, sealed = blob[:NONCE_BYTES], blob[NONCE_BYTES:]
        if len(nonce) != NONCE_BYTES:
            raise InvalidTag
        payload = _aead(secret).decrypt(nonce, sealed, PREFIX.encode())
    except InvalidTag:
        raise StepError(
            "continuation refused: it does not authenticate (it was changed, forged, or sealed with "
            "another key: replicas must share GOCODE_STEP_KEY)"
        ) from None
    try:
        doc = json.loads(zlib.decompressobj().decompress(payload, 16 * limit))
        state = State(
            doc["program"],
            doc["tools"],
            [Entry.from_json(c) for c in doc["calls"]],
            [Entry.from_json(c) for c in doc["pending"]],
            int(doc["passes"]),
            float(doc["issued"]),
            str(doc.get("run") or ""),
            str(doc.get("refused") or ""),
        )
    except (ValueError, KeyError, TypeError, zlib.error) as exc:
        raise StepError(f"continuation refused: its content cannot be read ({exc})") from None
    if state.program != program:
        raise StepError("continuation refused: it belongs to another program (the code differs from the first pass)")
    if state.tools != tools:
        raise StepError(
            "continuation refused: it belongs to another tool set (the client tools or the servers' tools changed "
            "since the first pass)"
        )
    ttl = float(os.environ.get("GOCODE_STEP_TTL", DEFAULT_TTL_S)) if ttl is None else ttl
    if time.time() - state.issued > ttl:
        raise StepError(f"continuation refused: it is stale (issued more than {ttl:g} s ago); start the program again")
    return state


def apply_answers(state: State, answers: list[Any]) -> list[Entry]:
    """The known calls for the next pass: the continuation's, plus the caller's answers to its pending ones."""
    if not isinstance(answers, list):
        raise StepError("`results` must be a list of {id, result, isError}")
    pending = {state.call_id(e): e for e in state.pending}
    given: dict[str, Answer] = {}
    for i, raw in enumerate(answers):
        try:
            answer = raw if isinstance(raw, Answer) else Answer.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise StepError(f"result #{i + 1}: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
        if answer.id not in pending:
            waiting = ", ".join(f"{k} ({e.tool})" for k, e in pending.items()) or "none"
            raise StepError(f"result #{i + 1} answers {answer.id!r}, which is not a pending call (pending: {waiting})")
        if answer.id in given:
            raise StepError(f"call {answer.id} ({pending[answer.id].tool}) is answered twice")
        given[answer.id] = answer
    if missing := [k for k in pending if k not in given]:
        names = ", ".join(f"{k} ({pending[k].tool} {json.dumps(pending[k].arguments)[:200]})" for k in missing)
        raise StepError(f"no result for pending call(s) {names}: answer every call the last step returned")
    out = list(state.calls)
    for k, e in pending.items():
        a = given[k]
        out.append(Entry(e.server, e.tool, e.arguments, e.n, wire(value_result(a.result, a.is_error))))
    return out


@dataclass
class Declarations:
    """What a model needs to write a step program for a caller's tools: the Go declarations of
    the servers' tools and the caller's (``declarations``), and the Go function each client tool
    became (``functions``: tool name → Go name; see docs/stateless.md for the rule)."""

    declarations: str
    functions: dict[str, str]

    def as_json(self) -> dict[str, Any]:
        return {"status": "declarations", "passes": 0, "declarations": self.declarations, "functions": self.functions}


# --- the MCP tool ------------------------------------------------------------------------------

_SCHEMA_OBJECT: dict[str, Any] = {"type": "object"}
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "description": "Go statements: the body of func Run(ctx context.Context) error."},
        "tools": {
            "type": "array",
            "description": "Your own tools: each becomes a typed Go function; calls to them come back to you.",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "description": {"type": "string"},
                    "inputSchema": _SCHEMA_OBJECT,
                    "outputSchema": _SCHEMA_OBJECT,
                },
                "required": ["name"],
            },
        },
        "continuation": {"type": "string", "description": "The continuation the last step returned (none at first)."},
        "declarations_only": {
            "type": "boolean",
            "description": "Run nothing: answer the Go declarations of the servers' tools and of `tools` "
            '(and which Go function each of `tools` became); `code` is ignored (give "").',
        },
        "results": {
            "type": "array",
            "description": "A result for every call the last step returned.",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "result": {}, "isError": {"type": "boolean"}},
                "required": ["id"],
            },
        },
    },
    "required": ["code"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["done", "pending", "error", "declarations"]},
        "passes": {"type": "integer"},
        "calls": {"type": "array", "items": {"type": "object"}},
        "continuation": {"type": "string"},
        "ok": {"type": "boolean"},
        "output": {"type": "string"},
        "result": {"description": "What the program gave result(v), when it did (done only)."},
        "resultFile": {"type": "string"},
        "error": {"type": "string"},
        "declarations": {"type": "string"},
        "functions": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["status", "passes"],
}


def tool_definition(rules: str) -> dict[str, Any]:
    """``step_go_code`` as an MCP Tool (wire JSON)."""
    description = (
        "Run Go code whose calls to YOUR tools come back to you, statelessly. Declare your tools in `tools` "
        "(name, description, inputSchema, outputSchema); each is a typed Go function like the servers' tools. "
        'The answer is {"status":"done", "output", "result"} or {"status":"pending", "calls":[{"id","name","arguments"}], '
        '"continuation"}: run every call, then call again with the same code and tools, the continuation, and '
        '"results":[{"id","result","isError"}]. Calls already made are answered from the continuation, never '
        'made again. With "declarations_only": true nothing runs: the answer is {"status":"declarations", '
        '"declarations", "functions"}, the Go your tools become.\n\n' + rules
    )
    return {
        "name": STEP_TOOL_NAME,
        "description": description,
        "inputSchema": INPUT_SCHEMA,
        "outputSchema": OUTPUT_SCHEMA,
    }


# --- one pass -----------------------------------------------------------------------------------


@dataclass
class StepResult:
    """One pass: ``done`` (the program finished: ``run``), ``pending`` (run ``calls``, then step
    again with ``continuation``), or ``error`` (the replay diverged or a record failed: ``error``)."""

    status: Literal["done", "pending", "error"]
    continuation: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    run: RunResult | None = None
    error: str = ""
    passes: int = 0

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "passes": self.passes}
        if self.status == "pending":
            out.update(calls=self.calls, continuation=self.continuation)
        elif self.status == "done" and self.run is not None:
            out.update(ok=self.run.ok, output=self.run.output)
            if self.run.result is not None:  # the program's result(v), as execute_go_code gives it
                out["result"] = self.run.result
            if self.run.result_file:
                out["resultFile"] = self.run.result_file
            if not self.run.ok:
                out["error"] = self.run.error_text()
        else:
            out["error"] = self.error
        return out


def grace() -> float:
    return float(os.environ.get("GOCODE_STEP_GRACE", DEFAULT_GRACE_S))


def busy_limit() -> float:
    """How long reports that the program computes keep a pass open after its last call: a
    goroutine that never stops must not make every pass wait for the run's timeout."""
    return float(os.environ.get("GOCODE_STEP_BUSY", DEFAULT_BUSY_S))


def quiet(ic: Interceptor, grace_s: float, now: float | None = None, busy_s: float | None = None) -> bool:
    """Whether the program seems to wait only on calls this pass will not answer: the
    wall-clock fallback for a program whose runtime cannot tell (see the module docstring)."""
    now = time.monotonic() if now is None else now
    busy_s = busy_limit() if busy_s is None else busy_s
    waiting = bool(ic.pending) or ic.held > 0
    calm = now - ic.last_event >= grace_s or now - ic.last_call >= max(busy_s, grace_s)
    return waiting and ic.in_flight == 0 and calm


async def drive(ic: Interceptor, run: Callable[[], Awaitable[RunResult]], grace_s: float) -> RunResult | None:
    """Run the program until it ends (its result) or is quiet (None: it was stopped)."""
    got: list[RunResult] = []
    try:
        await _until_quiet(ic, run, grace_s, got)
    finally:
        ic.close()  # also when the caller is cancelled: nothing waits on a held call after it
    return got[0] if got else None


async def _until_quiet(
    ic: Interceptor, run: Callable[[], Awaitable[RunResult]], grace_s: float, got: list[RunResult]
) -> None:
    async with anyio.create_task_group() as tg:

        async def program() -> None:
            got.append(await run())
            tg.cancel_scope.cancel()

        tg.start_soon(program)
        busy_s = busy_limit()
        while True:
            changed = ic.changed
            if ic.settled():  # the program said so, and every count agrees: nothing to wait for
                tg.cancel_scope.cancel()
                break
            with anyio.move_on_after(grace_s / 3):
                await changed.wait()
            if quiet(ic, grace_s, busy_s=busy_s):
                # Confirm with the loop running: a controller too busy to answer for the grace
                # period may have calls queued that arrive now (reports do not count here: a
                # program busy past the limit sends them all the time).
                seen = ic.last_call
                await anyio.sleep(grace_s / 3)
                if ic.last_call != seen or not quiet(ic, grace_s, busy_s=busy_s):
                    continue
                tg.cancel_scope.cancel()
                break


def outcome(ic: Interceptor, state: State, result: RunResult | None, secret: bytes) -> StepResult:
    """The answer to a pass from what its interceptor saw."""
    passes = state.passes + 1
    if ic.failure is not None:
        return StepResult("error", error=ic.failure, run=result, passes=passes)
    if (diverged := ic.divergence()) is not None:
        return StepResult("error", error=diverged, run=result, passes=passes)
    if result is not None and not ic.pending:
        return StepResult("done", run=result, passes=passes)
    batch = sorted(ic.pending, key=lambda p: batch_order(p.entry))
    entries = [p.entry for p in batch]
    nxt = State(state.program, state.tools, list(ic.calls), entries, passes, run=state.run, refused=ic.refusal or "")
    calls = [p.as_json() | {"id": state.call_id(p.entry)} for p in batch]
    return StepResult("pending", encode(nxt, secret), calls, run=result, passes=passes)


__all__ = [
    "CLIENT_SERVER",
    "IDLE_ENV",
    "STEP_TOOL_NAME",
    "Answer",
    "Bound",
    "ClientTool",
    "Declarations",
    "Pending",
    "State",
    "StepError",
    "StepResult",
    "apply_answers",
    "client_tools",
    "decode",
    "drive",
    "encode",
    "key",
    "outcome",
    "program_hash",
    "tool_definition",
]
