"""The orchestrator's model clients against a real local endpoint, through the real SDKs: the
retry policy (429/5xx, Retry-After), replies that cannot be read, keys; and the pure parts
(reading replies, the config fields, choosing a model)."""

from __future__ import annotations

import anyio
import pytest

from gocode.agent import Message, client_for, pick_model
from gocode.agent.llm import retry_after
from gocode.agent.prompts import read_code, read_decision
from gocode.config import ModelConfig, parse_config
from gocode.errors import ConfigError, ModelError
from tests.llm_server import ScriptedLLM, Turn

KEY = "sk-test-0123456789abcdef"


def model(provider: str, url: str, **extra: object) -> ModelConfig:
    return ModelConfig(ref="m", type=provider, id="test-model", base_url=url, api_key_env="TEST_KEY", **extra)


def complete(provider: str, llm: ScriptedLLM, text: str = "hi", **extra: object):
    url = llm.openai_url if provider == "openai" else llm.anthropic_url
    client = client_for(model(provider, url, **extra), {"TEST_KEY": KEY})

    async def main():
        try:
            return await client.complete("be brief", [Message("user", text)])
        finally:
            await client.aclose()

    return anyio.run(main)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_rate_limit_is_retried_after_the_time_it_asks_for(provider: str) -> None:
    turns = [Turn(status=429, headers={"retry-after": "1"}, error="slow down"), Turn("hello")]
    with ScriptedLLM(turns) as llm:
        reply = complete(provider, llm)
    assert (reply.text, reply.attempts, reply.retry_waits_s) == ("hello", 2, [1.0])
    first, second = llm.requests
    assert second.at - first.at >= 0.95  # the SDK's own retries are off: this wait is Retry-After's
    assert reply.usage.input_tokens and reply.usage.output_tokens


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_server_errors_are_retried_then_reported_without_the_key(provider: str) -> None:
    turns = [Turn(status=503, headers={"retry-after-ms": "10"}, error=f"down, key {KEY}")] * 4
    with ScriptedLLM(turns) as llm, pytest.raises(ModelError) as err:
        complete(provider, llm)
    assert len(llm.requests) == 4
    assert err.value.status == 503
    assert "answered 503 after 4 attempts" in str(err.value)
    assert KEY not in str(err.value) and "[redacted]" in str(err.value)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_refused_key_is_not_retried(provider: str) -> None:
    with ScriptedLLM([Turn(status=401, error="invalid key")]) as llm, pytest.raises(ModelError) as err:
        complete(provider, llm)
    assert len(llm.requests) == 1
    assert "answered 401 (check the key in the environment variable)" in str(err.value)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("raw", ["this is not json", '{"unexpected": true}'])
def test_a_reply_that_cannot_be_read_is_a_model_error(provider: str, raw: str) -> None:
    with ScriptedLLM([Turn(raw=raw)]) as llm, pytest.raises(ModelError) as err:
        complete(provider, llm)
    assert "the reply could not be read" in str(err.value)


def test_a_slow_endpoint_times_out_with_the_limit_named() -> None:
    def slow(_rec):  # runs in the server's event loop thread: blocks this one request
        import time

        time.sleep(1.5)
        return Turn("late")

    with ScriptedLLM(slow) as llm, pytest.raises(ModelError) as err:
        complete("openai", llm, timeout=0.5)
    assert "did not answer within 0.5 s" in str(err.value)
    assert len(llm.requests) == 1  # a timeout is not retried


@pytest.mark.fast
def test_retry_after_reads_seconds_milliseconds_and_dates() -> None:
    class Exc:
        def __init__(self, headers: dict[str, str]) -> None:
            self.response = type("R", (), {"headers": headers})()

    assert retry_after(Exc({"retry-after": "3"})) == 3.0
    assert retry_after(Exc({"retry-after-ms": "250", "retry-after": "3"})) == 0.25
    assert retry_after(Exc({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0  # in the past
    assert retry_after(Exc({"retry-after": "soon"})) is None
    assert retry_after(Exc({})) is None
    assert retry_after(ValueError()) is None


@pytest.mark.fast
def test_reading_the_deciding_reply() -> None:
    assert read_decision("TOOLS: current city; weather").kind == "tools"
    assert read_decision("Let me check.\n**TOOLS: weather**").text == "weather"
    got = read_decision("Paris is the capital of France.")
    assert (got.kind, got.text) == ("answer", "Paris is the capital of France.")


@pytest.mark.fast
def test_reading_code_from_a_reply() -> None:
    assert read_code("Here:\n```go\nfmt.Println(1)\n```\nand\n```go\nx\n```").code == "fmt.Println(1)\n"
    assert read_code("```python\nprint(1)\n```\n```\nfmt.Println(2)\n```").code == "fmt.Println(2)\n"
    assert read_code("~~~golang\nfmt.Println(3)\n~~~").code == "fmt.Println(3)\n"
    assert read_code("Call getWeather with the city.").code is None
    assert read_code("```python\nprint(1)\n```").code is None
    got = read_code("CANNOT: no tool sends email")
    assert (got.code, got.cannot) == (None, "no tool sends email")


@pytest.mark.fast
def test_model_endpoint_fields_are_typed_and_checked() -> None:
    config = parse_config(
        "models:\n  - {ref: a, provider: OpenAI, id: gpt, base_url: 'http://127.0.0.1:8000/v1', api_key_env: K,"
        " display_name: A}\n"
    )
    m = config.models[0]
    assert (m.type, m.id, m.base_url, m.api_key_env, m.timeout) == (
        "openai",
        "gpt",
        "http://127.0.0.1:8000/v1",
        "K",
        120.0,
    )
    with pytest.raises(ConfigError) as err:
        parse_config(f"models: [{{ref: a, type: openai, api_key_env: {KEY}}}]", "g.yaml")
    assert "models[0].api_key_env" in str(err.value) and KEY not in str(err.value)
    with pytest.raises(ConfigError, match=r"models\[0\].base_url: .*must start with http"):
        parse_config("models: [{ref: a, type: openai, base_url: 'localhost:8000'}]", "g.yaml")


@pytest.mark.fast
def test_choosing_the_model_to_ask() -> None:
    one = parse_config("models: [{ref: plain}, {ref: a, type: anthropic, id: c}]")
    assert pick_model(one, None).ref == "a"
    two = parse_config("models: [{ref: a, type: anthropic, id: c}, {ref: b, type: openai, id: g}]")
    with pytest.raises(ModelError, match="choose one with --model: a, b"):
        pick_model(two, None)
    with pytest.raises(ModelError, match=r"unknown model ref 'z' \(models: a, b\)"):
        pick_model(two, "z")
    with pytest.raises(ModelError, match="no model to ask"):
        pick_model(parse_config("{}"), None)


@pytest.mark.fast
def test_clients_refuse_what_they_cannot_use() -> None:
    with pytest.raises(ModelError, match="the API key of model 'm' is missing: set the environment variable TEST_KEY"):
        client_for(model("openai", "http://127.0.0.1:1/v1"), {})
    with pytest.raises(ModelError, match="has type 'gemini'; gocode ask speaks openai and anthropic"):
        client_for(model("gemini", "http://127.0.0.1:1"), {"TEST_KEY": KEY})
    with pytest.raises(ModelError, match="has no `type`"):
        client_for(ModelConfig(ref="m"), {})
