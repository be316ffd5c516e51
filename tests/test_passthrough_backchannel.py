"""A passed-through server's log messages, sampling and elicitation requests during a call reach
the client of that call, and no other: ``gocode serve`` over HTTP with code mode off, a real
stdio server upstream (tests/servers/backchannel_server.py) that talks back, and Python SDK
clients with their own callbacks. The router's budgets are also tested on their own (fast)."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from gocode.mcp import backchannel
from gocode.mcp.backchannel import InFlight
from tests.conftest import ROOT, background, free_port

GOCODE = str(Path(sys.executable).parent / "gocode")
SERVER = ROOT / "tests" / "servers" / "backchannel_server.py"
TOKEN = "test-token-" + uuid.uuid4().hex


class Client_:
    """One client of serve, and everything its callbacks saw."""

    def __init__(
        self,
        url: str,
        name: str,
        *,
        sampling: bool = True,
        elicitation: bool = True,
        mode: str = "legacy",
        log_level: types.LoggingLevel | None = None,
    ) -> None:
        self.name = name
        self.samples: list[str] = []
        self.asked: list[str] = []
        self.logs: list[types.LoggingMessageNotificationParams] = []
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        self.client = Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            log_level=log_level,
            sampling_callback=self._sample if sampling else None,
            elicitation_callback=self._elicit if elicitation else None,
            logging_callback=self._log,
        )

    async def _sample(self, context: ClientRequestContext, params: types.CreateMessageRequestParams) -> Any:
        content = params.messages[0].content
        self.samples.append(content.text if isinstance(content, types.TextContent) else "")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=f"from {self.name}"), model="test"
        )

    async def _elicit(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> Any:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": f"{self.name} says yes"})

    async def _log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def call(self, tool: str, **arguments: Any) -> str:
        result = await self.client.call_tool(tool, arguments)
        assert not result.is_error, result
        part = result.content[0]
        assert isinstance(part, types.TextContent)
        return part.text


def serve_talk(folder: Path, code_mode: bool) -> Iterator[str]:
    """`gocode serve` over HTTP with the talking server upstream (its tools passed through, or
    in code mode); yields the endpoint's URL."""
    config = folder / "gocode.json"
    config.write_text(json.dumps({
        "mcpServers": {"talk": {"command": sys.executable, "args": [str(SERVER)], "timeout": 60}},
        "defaults": {"codeMode": {"enabled": code_mode, "sandbox": "off"}},
    }))  # fmt: skip
    port = free_port()
    with background([GOCODE, "serve", "-c", str(config), "--transport", "http", "--port", str(port)], port,
                    env={"GOCODE_TOKEN": TOKEN}):  # fmt: skip
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def url(tmp_path_factory) -> Iterator[str]:
    yield from serve_talk(tmp_path_factory.mktemp("backchannel"), code_mode=False)


async def tool_names(c: Client_) -> list[str]:
    return [t.name for t in (await c.client.list_tools()).tools]


def test_sampling_and_elicitation_reach_the_caller(url):
    async def go() -> None:
        alice = Client_(url, "alice")
        async with alice.client:
            assert "sample" in await tool_names(alice)
            assert await alice.call("sample", prompt="two words") == "from alice"
            assert await alice.call("ask", question="proceed?") == "accept alice says yes"
        assert alice.samples == ["two words"]
        assert alice.asked == ["proceed?"]

    anyio.run(go)


def test_a_client_without_the_capability_is_not_asked(url):
    async def go() -> None:
        bare = Client_(url, "bare", sampling=False, elicitation=False)
        async with bare.client:
            assert await bare.call("sample", prompt="p") == "refused: Sampling not supported"
            assert await bare.call("ask", question="q") == "refused: Elicitation not supported"

    anyio.run(go)


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # logging/setLevel
def test_log_messages_reach_the_caller_at_its_level_and_bounded(url):
    async def go() -> None:
        quiet, loud = Client_(url, "quiet"), Client_(url, "loud")
        async with quiet.client, loud.client:
            await quiet.client.set_logging_level("warning")
            assert await quiet.call("chatter", count=2, size=10) == "done"
            assert [(m.level, m.logger) for m in quiet.logs] == [("warning", "chatter"), ("error", "chatter")] * 2
            assert loud.logs == []
            # A hostile server: huge messages, and many of them. Each is cut, and only so many go on.
            assert await loud.call("chatter", count=200, size=1_000_000) == "done"
            assert len(loud.logs) == backchannel.MAX_LOGS
            assert all(len(json.dumps(m.data)) < backchannel.MAX_LOG_BYTES + 100 for m in loud.logs)
            assert quiet.logs[4:] == []

    anyio.run(go)


def test_a_2026_client_gets_the_log_messages_it_opted_in_to_and_is_not_asked(url):
    async def go() -> None:
        silent, warned = Client_(url, "silent", mode="auto"), Client_(url, "warned", mode="auto", log_level="warning")
        async with silent.client, warned.client:
            assert await silent.call("chatter", count=1, size=1) == "done"
            assert await warned.call("chatter", count=1, size=1) == "done"
            # Its era has no server-to-client requests during a call: gocode says it cannot be asked.
            assert await warned.call("sample", prompt="p") == "refused: Sampling not supported"
        assert silent.logs == []
        assert [m.level for m in warned.logs] == ["warning", "error"]
        assert warned.samples == []

    anyio.run(go)


@pytest.fixture(scope="module")
def modern_url(tmp_path_factory) -> Iterator[str]:
    """The same server, made to speak only the 2026-07-28 era (tests/era_proxy.py)."""
    config = tmp_path_factory.mktemp("backchannel-2026") / "gocode.json"
    proxied = [str(ROOT / "tests" / "era_proxy.py"), "modern-only", "--", sys.executable, str(SERVER)]
    config.write_text(json.dumps({
        "mcpServers": {"talk": {"command": sys.executable, "args": proxied, "timeout": 60}},
        "defaults": {"codeMode": {"enabled": False, "sandbox": "off"}},
    }))  # fmt: skip
    port = free_port()
    with background([GOCODE, "serve", "-c", str(config), "--transport", "http", "--port", str(port)], port,
                    env={"GOCODE_TOKEN": TOKEN}):  # fmt: skip
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # logging/setLevel
def test_a_2026_server_logs_for_the_caller(modern_url):
    async def go() -> None:
        c = Client_(modern_url, "c")
        async with c.client:
            await c.client.set_logging_level("error")
            assert await c.call("chatter", count=1, size=1) == "done"
        assert [(m.level, m.data) for m in c.logs] == [("error", "error 0 x")]

    anyio.run(go)


def test_a_sampling_flood_is_cut_off(url):
    async def go() -> None:
        c = Client_(url, "c")
        async with c.client:
            answered, refused = (await c.call("flood", times=100)).split()
        assert (int(answered), int(refused)) == (backchannel.MAX_REQUESTS, 100 - backchannel.MAX_REQUESTS)
        assert len(c.samples) == backchannel.MAX_REQUESTS

    anyio.run(go)


def test_two_clients_never_get_each_others_traffic(url, tmp_path):
    async def go() -> None:
        alice, bob = Client_(url, "alice"), Client_(url, "bob")
        async with alice.client, bob.client, anyio.create_task_group() as tg:
            held: list[str] = []

            async def hold() -> None:
                held.append(await alice.call("hold", dir=str(tmp_path)))

            tg.start_soon(hold)
            with anyio.fail_after(60):
                while not (tmp_path / "held").exists():
                    await anyio.sleep(0.02)
            # Alice's call is in flight on the same upstream session: Bob's requests could be
            # either's, so they are refused, and nothing reaches Alice.
            assert (await bob.call("sample", prompt="bob's")).startswith("refused: Sampling is only forwarded")
            assert (await bob.call("ask", question="bob's")).startswith("refused: Elicitation is only forwarded")
            await bob.call("chatter", count=1, size=1)
            (tmp_path / "go").write_text("go")
        assert held == ["released"]
        assert (alice.samples, alice.asked, alice.logs) == ([], [], [])
        assert (bob.samples, bob.asked, bob.logs) == ([], [], [])
        # Alone in flight, each call's requests go to its own client.
        alice, bob = Client_(url, "alice"), Client_(url, "bob")
        async with alice.client, bob.client:
            assert await bob.call("sample", prompt="bob's") == "from bob"
            assert await alice.call("ask", question="alice's") == "accept alice says yes"
        assert (alice.samples, alice.asked, bob.samples, bob.asked) == ([], ["alice's"], ["bob's"], [])

    anyio.run(go)


def test_a_request_outside_any_call_is_refused(url, tmp_path):
    async def go() -> None:
        c = Client_(url, "c")
        async with c.client:
            assert await c.call("later", dir=str(tmp_path)) == "answered"
            (tmp_path / "go").write_text("go")
            with anyio.fail_after(60):
                while not (tmp_path / "outcome").exists():
                    await anyio.sleep(0.02)
        assert (tmp_path / "outcome").read_text().startswith("refused: Sampling is only forwarded during a call")
        assert c.samples == []

    anyio.run(go)


@pytest.fixture(scope="module")
def code_url(tmp_path_factory) -> Iterator[str]:
    yield from serve_talk(tmp_path_factory.mktemp("backchannel-code"), code_mode=True)


ASKING_PROGRAM = """\
s, err := sample(ctx, SampleInput{Prompt: "from go"})
if err != nil {
	return err
}
a, err := ask(ctx, AskInput{Question: "go on?"})
if err != nil {
	return err
}
fmt.Println(s.Result, "|", a.Result)
"""


@pytest.mark.go
def test_a_programs_tools_ask_the_client_of_execute_go_code(code_url):
    async def go() -> tuple[str, str]:
        alice, bare = Client_(code_url, "alice"), Client_(code_url, "bare", sampling=False, elicitation=False)
        async with alice.client, bare.client:
            asked = await alice.call("execute_go_code", code=ASKING_PROGRAM)
            refused = await bare.call("execute_go_code", code=ASKING_PROGRAM)
        assert (alice.samples, alice.asked) == (["from go"], ["go on?"])
        return asked, refused

    asked, refused = anyio.run(go)
    assert asked.strip() == "from alice | accept alice says yes", asked
    assert refused.strip() == "refused: Sampling not supported | refused: Elicitation not supported", refused


# --- the router on its own ----------------------------------------------------------------------


class Recorder:
    sampling = elicitation = True

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.seen.append(f"log {params.data}")

    async def sample(self, params: types.CreateMessageRequestParams) -> Any:
        self.seen.append("sample")
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="ok"), model="m")

    async def elicit(self, params: types.ElicitRequestParams) -> Any:
        self.seen.append("elicit")
        return types.ElicitResult(action="decline")


SAMPLE = types.CreateMessageRequestParams(messages=[], max_tokens=1)


@pytest.mark.fast
def test_router_takes_requests_only_to_the_one_call_in_flight():
    async def go() -> None:
        route, a, b = InFlight("s"), Recorder(), Recorder()
        ctx: Any = None
        line = types.LoggingMessageNotificationParams(level="info", data="hi")
        assert isinstance(await route.sample(ctx, SAMPLE), types.ErrorData)  # nobody in flight
        with route.call(a):
            assert isinstance(await route.sample(ctx, SAMPLE), types.CreateMessageResult)
            await route.log(line)
            with route.call(b):  # two in flight: whose is it?
                assert isinstance(await route.sample(ctx, SAMPLE), types.ErrorData)
                await route.log(line)
            with route.call(None):  # a call with nobody to forward to
                assert isinstance(await route.sample(ctx, SAMPLE), types.ErrorData)
            with route.call(a):  # the same client's calls in parallel (a program's): still its own
                assert isinstance(await route.sample(ctx, SAMPLE), types.CreateMessageResult)
        await route.log(line)
        assert a.seen == ["sample", "log hi", "sample"]
        assert b.seen == []

    anyio.run(go)


@pytest.mark.fast
def test_router_cuts_a_huge_log_message():
    big = types.LoggingMessageNotificationParams(level="info", logger="l" * 10_000, data={"k": "é" * 100_000})
    cut = backchannel.bounded(big)
    assert isinstance(cut.data, str) and len(cut.data.encode()) < backchannel.MAX_LOG_BYTES + 100
    assert cut.logger is not None and len(cut.logger) == backchannel.MAX_TEXT_CHARS
    small = types.LoggingMessageNotificationParams(level="info", data={"k": [1, 2]})
    assert backchannel.bounded(small).data == {"k": [1, 2]}


class Silent(Recorder):
    """A client that never answers."""

    async def sample(self, params: types.CreateMessageRequestParams) -> Any:
        self.seen.append("sample")
        await anyio.Event().wait()


@pytest.mark.fast
def test_router_gives_up_asking_when_the_call_ends():
    async def go() -> list[Any]:
        route, silent = InFlight("s"), Silent()
        answers: list[Any] = []

        async def ask() -> None:
            answers.append(await route.sample(None, SAMPLE))  # type: ignore[arg-type]  # no request context needed

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                with route.call(silent):
                    tg.start_soon(ask)
                    tg.start_soon(ask)  # waits its turn behind the first
                    while len(silent.seen) < 1:
                        await anyio.sleep(0)
                    await anyio.wait_all_tasks_blocked()
        return answers

    answers = anyio.run(go)
    assert len(answers) == 2 and all(isinstance(a, types.ErrorData) for a in answers)
    assert "while the call lasted" in answers[0].message
