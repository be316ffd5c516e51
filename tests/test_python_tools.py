"""Python callables as tools: typed from their annotations, called from Go through the loopback."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from typing import Annotated, Any

import anyio
import pytest
from pydantic import BaseModel, Field

from gocode import Toolbox
from gocode.codemode import TOOL_NAME
from gocode.errors import ConfigError
from gocode.schema.builder import build_package
from gocode.tools.python import PYTHON_SERVER, PythonTools, python_tool
from gocode.toolset import ToolSet
from gocode.view.modelview import render_full
from tests.conftest import ROOT, config_from, demo_stdio

# --- the functions ------------------------------------------------------------------------------


class Order(BaseModel):
    """An order to price."""

    item: str
    quantity: int = 1


class Quote(BaseModel):
    item: str
    total: float
    currency: str


def exchange_rate(base: Annotated[str, Field(description="ISO 4217 code")], quote: str) -> float:
    """The exchange rate from base to quote."""
    return 1.25 if (base, quote) == ("EUR", "USD") else 1.0


async def price(order: Order) -> Quote:
    """Price an order."""
    await anyio.sleep(0.01)
    return Quote(item=order.item, total=order.quantity * 2.5, currency="EUR")


def shout(text: str, times: int = 1) -> str:
    return " ".join([text.upper()] * times)


async def tags(n: int) -> list[str]:
    return [f"t{i}" for i in range(n)]


def refuse(account: str) -> Quote:
    raise PermissionError(f"account {account} is frozen")


def wrong(n: int) -> int:
    return "not a number"  # type: ignore[return-value]


async def hang_async() -> str:
    await anyio.sleep(3600)
    return "never"


RELEASE = threading.Event()


def hang_sync() -> str:
    RELEASE.wait(120)  # a blocked thread Python cannot stop: the test releases it at the end
    return "late"


TOOLS = [exchange_rate, price, shout, tags, refuse, wrong, hang_async, hang_sync]


def declarations(*fns: Any) -> str:
    return render_full(build_package(ToolSet((PythonTools(fns).known_tools,))))


# --- typing, pure -------------------------------------------------------------------------------


@pytest.mark.fast
def test_functions_become_typed_go_declarations():
    text = declarations(exchange_rate, price, shout, tags)
    assert "// ===== server python (4 tools) =====" in text
    # Parameters as an input struct, Field descriptions as comments, the docstring as the doc.
    assert "Base  string // ISO 4217 code" in text
    assert (
        "// The exchange rate from base to quote.\nfunc exchangeRate(context.Context, ExchangeRateInput) (float64, error)"
        in text
    )
    # A pydantic model parameter's fields are the arguments; a model result is a struct.
    assert (
        "// An order to price.\ntype PriceInput struct {\n\tItem string\n\t// optional:\n\tQuantity *int // default 1\n}"
        in text
    )
    assert "type PriceOutput struct {\n\tItem     string\n\tTotal    float64\n\tCurrency string\n}" in text
    assert "func price(context.Context, PriceInput) (PriceOutput, error)" in text
    # str results are text; lists and scalars their Go types.
    assert "func shout(context.Context, ShoutInput) (string, error)" in text
    assert "func tags(context.Context, TagsInput) ([]string, error)" in text


@pytest.mark.fast
def test_listing_and_passthrough_definition():
    tool = python_tool(price)
    assert tool.info.server == PYTHON_SERVER and tool.info.name == "price" and tool.structured
    assert tool.info.input_schema["required"] == ["item"]
    assert tool.info.output_schema is not None and tool.info.output_schema["title"] == "Quote"
    # A scalar result has a schema for Go, but an MCP client offered the tool sees no outputSchema
    # (MCP output schemas are objects).
    rate = python_tool(exchange_rate, name="fx.rate", description="Rates.")
    assert rate.info.output_schema == {"type": "number"}
    assert "outputSchema" not in rate.info.definition and rate.info.definition["name"] == "fx.rate"
    assert rate.info.description == "Rates."


@pytest.mark.fast
def test_untypable_callables_and_clashes_are_clear_errors():
    def star(*args: int) -> int:
        return 0

    with pytest.raises(ConfigError, match=r"\*args cannot be typed"):
        python_tool(star)
    with pytest.raises(ConfigError, match="a tool name uses"):
        python_tool(lambda: 1)
    with pytest.raises(ConfigError, match="must be callables"):
        python_tool("shout")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="two Python tools are named 'shout'"):
        PythonTools([shout, python_tool(exchange_rate, name="shout")])
    clash = config_from({"python": demo_stdio()})
    with pytest.raises(ConfigError, match=r"a server named 'python'.*python_server="):
        Toolbox(clash, tools=[shout])
    Toolbox(clash, tools=[shout], python_server="py")  # renamed: fine
    with pytest.raises(ConfigError, match="pooled sessions"):
        Toolbox(config_from({}), tools=[shout], pooled=False)


@pytest.mark.fast
def test_calls_validate_arguments_and_results():
    tools = PythonTools(TOOLS)

    async def go() -> None:
        ok = await tools.call("price", {"item": "pen", "quantity": 2}, 5)
        assert not ok.is_error and ok.structured_content == {"item": "pen", "total": 5.0, "currency": "EUR"}
        bad = await tools.call("price", {"quantity": "lots"}, 5)
        assert bad.is_error
        assert bad.content[0].text == (
            "invalid arguments for price: item: Field required; "
            "quantity: Input should be a valid integer, unable to parse string as an integer"
        )
        extra = await tools.call("shout", {"text": "a", "loud": True}, 5)
        assert extra.is_error and "loud: Extra inputs are not permitted" in extra.content[0].text
        listed = await tools.call("tags", {"n": 2}, 5)
        assert listed.content[0].text == '["t0", "t1"]' and listed.structured_content is None
        nothing = await tools.call("nope", {}, 5)
        assert nothing.is_error and "unknown Python tool 'nope'" in nothing.content[0].text

    anyio.run(go)


# --- from Go, through a toolbox -----------------------------------------------------------------

pytest_go = pytest.mark.go

PROGRAM = """
q, err := price(ctx, PriceInput{Item: "pen", Quantity: ptr(4)})
if err != nil {
	return err
}
rate, err := exchangeRate(ctx, ExchangeRateInput{Base: "EUR", Quote: "USD"})
if err != nil {
	return err
}
w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
if err != nil {
	return err
}
s, _ := shout(ctx, ShoutInput{Text: "hi", Times: ptr(2)})
t, _ := tags(ctx, TagsInput{N: 3})
fmt.Printf("%.2f %s %s %s %v\\n", q.Total*rate, q.Currency, w.Conditions, s, t)
_, err = refuse(ctx, RefuseInput{Account: "a-1"})
fmt.Println("refuse:", err)
_, err = wrong(ctx, WrongInput{N: 1})
fmt.Println("wrong:", err)
any, err := callTool(ctx, "python.shout", map[string]any{"text": "by name"})
fmt.Println("by name:", any, err)
_, err = callTool(ctx, "python.missing", nil)
fmt.Println("missing:", err)
"""


def toolbox(module_cache: Any, **kwargs: Any) -> Toolbox:
    # Unsandboxed: the tests run wherever the sandbox cannot (it is not what they test).
    config = config_from({"weather": demo_stdio()}, defaults={"codeMode": {"sandbox": "off", "timeout": 8}})
    return Toolbox(config, module_cache=module_cache, tools=TOOLS, **kwargs)


@pytest_go
def test_a_program_calls_python_functions_and_an_mcp_tool(module_cache):
    async def go() -> None:
        async with toolbox(module_cache) as box:
            r = await box.execute(PROGRAM)
            assert r.ok, r.error_text()
            assert r.output.splitlines() == [
                "12.50 EUR sunny HI HI [t0 t1 t2]",
                "refuse: tool refuse (server python) failed: PermissionError: account a-1 is frozen",
                "wrong: tool wrong (server python) failed: wrong returned 'not a number', which its return "
                "annotation does not allow: Input should be a valid integer, unable to parse string as an integer",
                "by name: BY NAME <nil>",
                'missing: calling tool missing (server python): calling "tools/call": '
                "server 'python' has no tool 'missing'",
            ]
            calls = [(c.server, c.tool, c.error) for c in r.tool_calls]
            assert calls == [
                ("python", "price", None),
                ("python", "exchange_rate", None),
                ("weather", "get_weather", None),
                ("python", "shout", None),
                ("python", "tags", None),
                ("python", "refuse", "PermissionError: account a-1 is frozen"),
                (
                    "python",
                    "wrong",
                    "wrong returned 'not a number', which its return annotation does not allow: "
                    "Input should be a valid integer, unable to parse string as an integer",
                ),
                ("python", "shout", None),
            ]
            # The model sees them beside the MCP tools, and a near-miss gets "did you mean".
            assert "func exchangeRate(context.Context, ExchangeRateInput) (float64, error)" in (
                box.tools()[0].description or ""
            )
            typo = await box.call(
                TOOL_NAME, {"code": 'r, _ := exchangeRates(ctx, ExchangeRateInput{Base: "EUR"})\n_ = r'}
            )
            assert typo.is_error and "did you mean exchangeRate" in typo.text, typo.text
            found = box.code_mode.runtime_search("currency exchange rate", 3)
            assert found[0]["function"] == "exchangeRate" and found[0]["server"] == "python"

    anyio.run(go)


@pytest_go
@pytest.mark.parametrize("fn", ["hangAsync", "hangSync"])
def test_a_hanging_function_ends_with_the_run_and_the_controller_carries_on(module_cache, fn):
    async def go() -> None:
        async with toolbox(module_cache) as box:
            start = time.monotonic()
            r = await box.execute(f"s, err := {fn}(ctx)\nfmt.Println(s, err)", timeout=3)
            assert r.phase == "timeout" and time.monotonic() - start < 60, r.error_text()  # not the 120 s hang
            assert [(c.tool, c.error) for c in r.tool_calls] == [
                (fn.replace("hangA", "hang_a").replace("hangS", "hang_s"), "cancelled: the program's run ended")
            ]
            again = await box.execute('s, err := shout(ctx, ShoutInput{Text: "still here"})\nfmt.Println(s, err)')
            assert again.ok and again.output == "STILL HERE <nil>\n", again.error_text()

    RELEASE.clear()
    try:
        anyio.run(go)
    finally:
        RELEASE.set()


@pytest_go
def test_an_excluded_python_tool_is_a_regular_tool(module_cache):
    async def go() -> None:
        config = config_from(
            {"weather": demo_stdio()}, defaults={"codeMode": {"sandbox": "off", "excludedTools": ["python.shout"]}}
        )
        async with Toolbox(config, module_cache=module_cache, tools=[shout, exchange_rate], prewarm=False) as box:
            assert [t.name for t in box.tools()] == [TOOL_NAME, "shout"]
            r = await box.call("shout", {"text": "direct", "times": 2})
            assert not r.is_error and r.text == "DIRECT DIRECT"
            assert "func shout" not in (box.tools()[0].description or "")

    anyio.run(go)


def maybe_rate(base: str) -> float | None:
    """The rate, or none when it is not known."""
    return 1.5 if base == "EUR" else None


@pytest_go
def test_an_optional_scalar_result_is_a_pointer(module_cache):
    """`float | None` is `*float64`: nil when the tool returns None, never a 0 that reads as a rate."""
    code = """\
for _, base := range []string{"EUR", "XXX"} {
	r, err := maybeRate(ctx, MaybeRateInput{Base: base})
	if err != nil {
		return err
	}
	if r == nil {
		fmt.Println(base, "none")
	} else {
		fmt.Println(base, *r)
	}
}
"""

    async def go() -> None:
        config = config_from({}, defaults={"codeMode": {"sandbox": "off", "timeout": 8}})
        async with Toolbox(config, module_cache=module_cache, tools=[maybe_rate], prewarm=False) as box:
            assert "func maybeRate(context.Context, MaybeRateInput) (*float64, error)" in (
                box.tools()[0].description or ""
            )
            r = await box.execute(code)
            assert r.ok, r.error_text()
            assert r.output == "EUR 1.5\nXXX none\n"

    anyio.run(go)


# A process that closes a toolbox whose sync tool never returns in time (it sleeps 60 s): after
# the run timed out ("timeout"), or while the call is in flight ("close").
HUNG_PROCESS = """
import sys, threading, time
import anyio
from gocode import Toolbox
from tests.conftest import config_from

started = threading.Event()


def stuck() -> str:
    started.set()
    time.sleep(60)
    return "late"


async def main(how: str) -> None:
    config = config_from({}, defaults={"codeMode": {"sandbox": "off"}})
    ended = anyio.Event()
    result = {}
    async with anyio.create_task_group() as tg:  # entered first: the run may outlive the toolbox
        async with Toolbox(config, tools=[stuck], prewarm=False) as box:

            async def run() -> None:
                result["run"] = await box.execute("fmt.Print(must(stuck(ctx)))", timeout=3 if how == "timeout" else 50)
                ended.set()

            tg.start_soon(run)
            await anyio.to_thread.run_sync(started.wait, 50)
            if how == "timeout":
                await ended.wait()
        print("closed", flush=True)
    r = result["run"]
    print(r.phase, r.error_text().splitlines()[-1], flush=True)


anyio.run(main, sys.argv[1])
"""


@pytest_go
@pytest.mark.parametrize(
    ("how", "answer"),
    [
        ("timeout", "timeout the program did not finish within 3 s and was killed (with every process it started)"),
        ("close", "runtime error: model.go:1: tool stuck (server python) failed: stuck: the toolbox closed before "
                  "it returned; the call is abandoned"),
    ],
)  # fmt: skip
def test_a_sync_tool_that_never_returns_does_not_keep_the_process_alive(module_cache, tmp_path, how, answer):
    script = tmp_path / "hung.py"
    script.write_text(HUNG_PROCESS)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, str(script), how], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        closed = proc.stdout.readline()  # the toolbox closed (bounded: the call times out within 50 s)
        at = time.monotonic()
        assert closed == "closed\n", proc.stderr.read() if proc.stderr else ""
        try:
            code: int | None = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            code = None  # still held by the sleeping thread
        took = time.monotonic() - at
        rest = proc.stdout.read() if code is not None else ""
    finally:
        proc.kill()
        proc.wait()
    # The thread still sleeps for most of its 60 s: the interpreter does not wait for it.
    assert code == 0 and took < 5, (code, took)
    assert rest == answer + "\n"
