"""A scripted model endpoint for tests: real HTTP on 127.0.0.1, speaking OpenAI Chat Completions
(``POST /v1/chat/completions``) and Anthropic Messages (``POST /v1/messages``).

Each request is answered by the next scripted :class:`Turn` (or by a function of the request) and
recorded with its headers, body and arrival time, so a test drives the real ``openai`` and
``anthropic`` SDKs and then checks exactly what they sent. Token usage in the replies is counted
from the request as it arrived (o200k_base over the messages, system prompt and tools), so token
figures compare fairly between ways of prompting.

    with ScriptedLLM([Turn("TOOLS: weather"), Turn("```go\\n...\\n```")]) as llm:
        ... base_url=llm.openai_url ...   # or llm.anthropic_url
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from gocode.view import tokens


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass
class Turn:
    """One scripted answer: assistant text and/or tool calls; or an HTTP error (``status``,
    ``headers``, ``error``); or ``raw`` bytes sent as they are with status 200."""

    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: str = ""
    raw: str | None = None


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float  # time.monotonic() on arrival

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def system(self) -> str:
        """The system prompt, in either wire format."""
        if "system" in self.body:
            system = self.body["system"]
            return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)
        return "".join(str(m.get("content")) for m in self.messages if m.get("role") == "system")

    def text(self) -> str:
        """Everything the request carried, as one string (for "does it mention X")."""
        return json.dumps(self.body, ensure_ascii=False)


Script = list[Turn] | Callable[[Recorded], Turn]


def prompt_tokens(body: dict[str, Any]) -> int:
    parts = [body.get("messages") or [], body.get("tools") or []]
    system = body.get("system")
    return sum(tokens.count_json(p) for p in parts if p) + (tokens.count(system) if isinstance(system, str) else 0)


def _completion_tokens(turn: Turn) -> int:
    calls = [{"name": c.name, "arguments": c.arguments} for c in turn.tool_calls]
    return tokens.count(turn.text or "") + (tokens.count_json(calls) if calls else 0)


class ScriptedLLM:
    """The endpoint; a context manager that starts uvicorn on a free port in a thread."""

    def __init__(self, script: Script) -> None:
        self._script = script
        self._next = 0
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._openai, methods=["POST"]),
                Route("/v1/messages", self._anthropic, methods=["POST"]),
            ]
        )
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ScriptedLLM:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the scripted LLM server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()

    async def _turn(self, request: Request) -> tuple[Recorded, Turn]:
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"unparsable": raw.decode(errors="replace")}
        rec = Recorded(request.url.path, {k.lower(): v for k, v in request.headers.items()}, body, time.monotonic())
        with self._lock:
            self.requests.append(rec)
            if callable(self._script):
                return rec, self._script(rec)
            if self._next >= len(self._script):
                return rec, Turn(status=500, error=f"the script has only {len(self._script)} turns")
            turn = self._script[self._next]
            self._next += 1
            return rec, turn

    async def _openai(self, request: Request) -> Response:
        rec, turn = await self._turn(request)
        if turn.raw is not None:
            return Response(turn.raw, media_type="application/json")
        if turn.status != 200:
            doc = {"error": {"message": turn.error or "scripted error", "type": "scripted", "code": turn.status}}
            return JSONResponse(doc, turn.status, headers=turn.headers)
        message: dict[str, Any] = {"role": "assistant", "content": turn.text}
        if turn.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{len(self.requests)}_{i}", "type": "function",
                 "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for i, c in enumerate(turn.tool_calls)
            ]  # fmt: skip
        inp, out = prompt_tokens(rec.body), _completion_tokens(turn)
        doc = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": rec.body.get("model", ""),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if turn.tool_calls else "stop"}],
            "usage": {"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out},
        }
        return JSONResponse(doc, headers=turn.headers)

    async def _anthropic(self, request: Request) -> Response:
        rec, turn = await self._turn(request)
        if turn.raw is not None:
            return Response(turn.raw, media_type="application/json")
        if turn.status != 200:
            kind = {429: "rate_limit_error", 401: "authentication_error", 529: "overloaded_error"}.get(
                turn.status, "api_error"
            )
            doc = {"type": "error", "error": {"type": kind, "message": turn.error or "scripted error"}}
            return JSONResponse(doc, turn.status, headers=turn.headers)
        content: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text is not None else []
        content += [
            {"type": "tool_use", "id": f"toolu_{len(self.requests)}_{i}", "name": c.name, "input": c.arguments}
            for i, c in enumerate(turn.tool_calls)
        ]
        doc = {
            "id": f"msg_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": rec.body.get("model", ""),
            "content": content,
            "stop_reason": "tool_use" if turn.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": prompt_tokens(rec.body), "output_tokens": _completion_tokens(turn)},
        }
        return JSONResponse(doc, headers=turn.headers)
