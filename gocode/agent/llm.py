"""The orchestrator's model clients: one request in, the reply's text and token usage out.

Each provider is reached through its official SDK (``openai`` for Chat Completions, which
OpenAI-compatible local servers also speak; ``anthropic`` for Messages), installed as the
extras ``gocode[openai]`` and ``gocode[anthropic]``. The SDKs' own retries are off so there is
one policy, here: rate limits (429), server errors (5xx) and failed connections are retried with
tenacity, waiting what ``Retry-After`` asks (capped) or backing off exponentially.

The API key is read from the environment variable the model's ``api_key_env`` names and is
never part of a message: any error text that contains it is redacted first.
"""

from __future__ import annotations

import email.utils
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from gocode.config import ModelConfig
from gocode.errors import ModelError

Provider = Literal["openai", "anthropic"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic")
DEFAULT_KEY_ENV: dict[Provider, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}

ATTEMPTS = 4  # one request and three retries
RETRY_AFTER_CAP_S = 60.0  # a longer Retry-After is waited out only this long


@dataclass(frozen=True)
class Message:
    role: Literal["user", "assistant"]
    content: str

    def as_json(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class Usage:
    """Tokens of one request as the endpoint counted them (None when it did not say)."""

    input_tokens: int | None = None
    output_tokens: int | None = None

    @property
    def total(self) -> int:
        return (self.input_tokens or 0) + (self.output_tokens or 0)

    def as_json(self) -> dict[str, int | None]:
        return {"input": self.input_tokens, "output": self.output_tokens, "total": self.total}


@dataclass
class Reply:
    """One answered request: the reply's text, its usage, how long it took and how many tries."""

    text: str
    usage: Usage
    duration_ms: float = 0.0
    attempts: int = 1
    retry_waits_s: list[float] = field(default_factory=list)


class ChatClient(Protocol):
    """A model endpoint: :meth:`complete` sends a system prompt and a conversation."""

    provider: str
    model: str

    async def complete(self, system: str, messages: list[Message]) -> Reply: ...

    async def aclose(self) -> None: ...


def client_for(model: ModelConfig, env: Mapping[str, str] | None = None) -> ChatClient:
    """The client for a ``models[]`` entry; raises :class:`ModelError` for a model without an
    endpoint, an unknown ``type``, a missing SDK or a missing key."""
    env = os.environ if env is None else env
    if model.type is None:
        raise ModelError(
            f"model {model.ref!r} has no `type` (openai or anthropic): set `type`, `id`, and `api_key_env` "
            "(and `base_url` for another endpoint than the provider's) in its models[] entry"
        )
    if model.type not in PROVIDERS:
        raise ModelError(f"model {model.ref!r} has type {model.type!r}; gocode ask speaks {' and '.join(PROVIDERS)}")
    provider: Provider = model.type
    if not model.id:
        raise ModelError(f"model {model.ref!r} has no `id` (the model name the API expects)")
    key_env = model.api_key_env or DEFAULT_KEY_ENV[provider]
    key = env.get(key_env, "")
    if not key:
        raise ModelError(f"the API key of model {model.ref!r} is missing: set the environment variable {key_env}")
    if provider == "openai":
        return OpenAIClient(model, key)
    return AnthropicClient(model, key)


class _SDKClient:
    """What both providers share: the retry policy and turning SDK errors into ModelError."""

    provider: str = ""

    def __init__(self, model: ModelConfig, key: str) -> None:
        self.model = model.id or ""
        self.ref = model.ref
        self.base_url = model.base_url
        self.timeout = model.timeout
        self.max_tokens = model.max_tokens
        self._key = key
        self._sdk: Any = None
        self._sdk_client: Any = None

    def _import(self) -> Any:
        try:
            return __import__(self.provider)
        except ImportError:
            raise ModelError(
                f"model {self.ref!r} needs the {self.provider} SDK: pip install 'gocode[{self.provider}]'"
            ) from None

    async def _send(self, system: str, messages: list[Message]) -> tuple[str, Usage]:
        raise NotImplementedError

    async def complete(self, system: str, messages: list[Message]) -> Reply:
        sdk = self._sdk
        start = time.monotonic()
        waits: list[float] = []
        attempts = 0

        def retryable(exc: BaseException) -> bool:
            if isinstance(exc, sdk.APIStatusError):
                return exc.status_code == 429 or exc.status_code >= 500
            # Refused or reset; a timeout is not retried (it already waited the whole limit).
            return isinstance(exc, sdk.APIConnectionError) and not isinstance(exc, sdk.APITimeoutError)

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome is not None else None
            asked = retry_after(exc)
            delay = min(asked, RETRY_AFTER_CAP_S) if asked is not None else _backoff(state)
            waits.append(round(delay, 3))
            return delay

        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception(retryable), stop=stop_after_attempt(ATTEMPTS), wait=wait, reraise=True
            ):
                with attempt:
                    attempts += 1
                    text, usage = await self._send(system, messages)
        except ModelError as exc:  # a reply _send could not read
            failed = exc
        except sdk.APIError as exc:
            failed = self._error(exc, attempts)
        except ValueError as exc:  # a body that is not JSON (the SDKs let the decoder's error through)
            failed = self.unreadable(f"{type(exc).__name__}: {exc}")
        else:
            return Reply(text, usage, (time.monotonic() - start) * 1000, attempts, waits)
        # A failed request was still made: the transcript counts its attempts as a reply's. The
        # retrier reckons a wait after the last attempt too, which no one waited.
        failed.attempts, failed.retry_waits_s = attempts, waits[: max(attempts - 1, 0)]
        raise failed from None

    def _error(self, exc: Any, attempts: int) -> ModelError:
        sdk = self._sdk
        where = f"model {self.ref!r} ({self.provider} at {self.base_url or 'the default endpoint'})"
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        if isinstance(exc, sdk.APITimeoutError):
            return ModelError(self._redact(f"{where} did not answer within {self.timeout:g} s{tries}"))
        if isinstance(exc, sdk.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            detail = f": {cause}" if cause else ""
            return ModelError(self._redact(f"cannot reach {where}{tries}{detail}"))
        if isinstance(exc, sdk.APIStatusError):
            hint = " (check the key in the environment variable)" if exc.status_code in (401, 403) else ""
            message = str(getattr(exc, "message", "") or exc)[:500]
            return ModelError(
                self._redact(f"{where} answered {exc.status_code}{tries}{hint}: {message}"), status=exc.status_code
            )
        return ModelError(self._redact(f"{where}: the reply could not be read: {exc}"))

    def _redact(self, text: str) -> str:
        return text.replace(self._key, "[redacted]") if self._key else text

    def unreadable(self, why: str) -> ModelError:
        return ModelError(self._redact(f"model {self.ref!r}: the reply could not be read: {why}"))

    async def aclose(self) -> None:
        if self._sdk_client is not None:
            await self._sdk_client.close()


class OpenAIClient(_SDKClient):
    """Chat Completions through the ``openai`` SDK (OpenAI, vLLM, llama.cpp, Ollama, …)."""

    provider = "openai"

    def __init__(self, model: ModelConfig, key: str) -> None:
        super().__init__(model, key)
        self._sdk = self._import()
        self._sdk_client = self._sdk.AsyncOpenAI(
            api_key=key, base_url=model.base_url, timeout=model.timeout, max_retries=0
        )

    async def _send(self, system: str, messages: list[Message]) -> tuple[str, Usage]:
        wire = [{"role": "system", "content": system}, *(m.as_json() for m in messages)]
        got = await self._sdk_client.chat.completions.create(model=self.model, messages=wire)
        try:
            content = got.choices[0].message.content
        except (AttributeError, IndexError, KeyError, TypeError):
            raise self.unreadable("no choices[0].message in it") from None
        if content is not None and not isinstance(content, str):
            raise self.unreadable(f"the message content is a {type(content).__name__}, not text")
        usage = getattr(got, "usage", None)
        return content or "", Usage(_int(usage, "prompt_tokens"), _int(usage, "completion_tokens"))


class AnthropicClient(_SDKClient):
    """Messages through the ``anthropic`` SDK."""

    provider = "anthropic"

    def __init__(self, model: ModelConfig, key: str) -> None:
        super().__init__(model, key)
        self._sdk = self._import()
        self._sdk_client = self._sdk.AsyncAnthropic(
            api_key=key, base_url=model.base_url, timeout=model.timeout, max_retries=0
        )

    async def _send(self, system: str, messages: list[Message]) -> tuple[str, Usage]:
        got = await self._sdk_client.messages.create(
            model=self.model,
            max_tokens=self.max_tokens,
            system=system,
            messages=[m.as_json() for m in messages],
        )
        blocks = getattr(got, "content", None)
        if not isinstance(blocks, list):
            raise self.unreadable("no content blocks in it")
        texts = [b.text for b in blocks if getattr(b, "type", None) == "text" and isinstance(b.text, str)]
        usage = getattr(got, "usage", None)
        return "".join(texts), Usage(_int(usage, "input_tokens"), _int(usage, "output_tokens"))


def _int(obj: Any, name: str) -> int | None:
    value = getattr(obj, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def retry_after(exc: BaseException | None) -> float | None:
    """Seconds a rate-limited or overloaded endpoint asked to wait (``Retry-After``: seconds or
    an HTTP date; ``retry-after-ms`` as OpenAI sends it), or None when it did not say."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(float(ms) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


_backoff = wait_exponential_jitter(multiplier=0.5, max=8.0, jitter=0.5)
