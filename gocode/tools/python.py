"""Python callables as tools: typed Go functions that run in the controller.

``Toolbox(config, tools=[get_rate, lookup_user])`` turns each function, sync or async, into a
tool of the virtual server ``python`` (:data:`PYTHON_SERVER`). Its JSON Schemas come from
pydantic, as ``validate_call`` sees the function: the parameters' annotations (``Annotated``
with ``Field(description=...)`` for a field's doc comment) give the input schema, and the
return annotation the output schema. From there it is a tool like any other: the same Go
naming, model view, search and "did you mean"; a program's call reaches the controller through
the loopback endpoint and :class:`PythonTools` answers it. No Python is ever generated into Go.

- A function whose only parameter is a pydantic model takes that model's fields as its
  arguments (the Go function takes the model as a struct).
- The return annotation types the Go result: a pydantic model or any object shape becomes a
  struct (sent as ``structuredContent``), a list or scalar its Go type (sent as JSON text),
  ``str``, ``None`` or no annotation a ``string`` (the text of the value).
- The arguments are validated before the call, the return value after it: a value the
  annotation does not allow is an error, as is an exception the function raises. Each reaches
  the program as an ``error`` carrying the message (an ``isError`` result), never a traceback.
- A call that does not finish within the run's timeout, or when the toolbox closes, is
  cancelled and answered with an error. A sync function runs in a daemon thread of its own,
  which Python cannot stop: it is abandoned (its answer dropped), and since the interpreter
  does not wait for daemon threads, one that never returns does not keep the process alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import json
import re
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, get_type_hints

import anyio
import mcp_types as types
from mcp.shared.dispatcher import ProgressFnT
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.experimental.arguments_schema import generate_arguments_schema
from pydantic_core import SchemaValidator, to_json

from gocode.errors import ConfigError
from gocode.mcp.backchannel import Caller
from gocode.toolset import ServerTools, ToolInfo

# The server name Python tools are listed under: `python.get_rate` for callTool, the Go
# function `getRate`. A configured server of this name is refused (see Toolbox).
PYTHON_SERVER = "python"

# MCP tool names (the 2025-11-25 revision's rule).
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_ERROR_CHARS = 2000  # the longest message sent back for one failure


@dataclass(frozen=True)
class PythonTool:
    """One callable as a tool: its listing, and how to validate, call and answer."""

    info: ToolInfo
    fn: Callable[..., Any]
    is_async: bool
    arguments: Callable[[dict[str, Any]], tuple[tuple[Any, ...], dict[str, Any]]]
    returns: TypeAdapter[Any] | None  # None: the value's text (str, None, no annotation)
    structured: bool  # the result is an object: sent as structuredContent

    @property
    def name(self) -> str:
        return self.info.name


def python_tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    server: str = PYTHON_SERVER,
) -> PythonTool:
    """Describe ``fn`` as a tool (``name``: the function's name; ``description``: its docstring).

    Raises :class:`~gocode.errors.ConfigError` for a callable that cannot be typed (``*args``,
    ``**kwargs``, a name no tool may have, annotations that do not resolve).
    """
    if not callable(fn):
        raise ConfigError(f"Python tools must be callables; got {type(fn).__name__}")
    tool_name = name or str(getattr(fn, "__name__", ""))
    if not _TOOL_NAME.match(tool_name):
        raise ConfigError(
            f"Python tool {tool_name or fn!r}: a tool name uses 1-128 letters, digits, '_', '-' or '.' "
            "(give one: python_tool(fn, name=...))"
        )
    label = f"Python tool {tool_name!r}"
    try:
        signature = inspect.signature(fn)
        hints = get_type_hints(fn, include_extras=True)
    except (TypeError, ValueError, NameError) as exc:
        raise ConfigError(f"{label}: cannot read its signature and annotations: {exc}") from None
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ConfigError(f"{label}: *{p.name} cannot be typed as a tool argument; name each parameter")
    params = list(signature.parameters.values())
    model = hints.get(params[0].name) if len(params) == 1 else None
    try:
        if isinstance(model, type) and issubclass(model, BaseModel):
            adapter: TypeAdapter[Any] = TypeAdapter(model)
            input_schema = adapter.json_schema()
            arguments = functools.partial(_model_arguments, adapter, params[0])
        else:
            # pydantic describes a callable's arguments; its stub types the parameter as a type form only.
            input_schema = TypeAdapter(fn).json_schema()  # type: ignore[arg-type]
            validator = SchemaValidator(generate_arguments_schema(fn))
            arguments = functools.partial(_plain_arguments, validator)
        returns, output_schema, structured = _return_type(hints.get("return", inspect.Signature.empty))
    except ConfigError:
        raise
    except Exception as exc:  # pydantic's errors for a type it cannot validate or describe
        raise ConfigError(f"{label}: its annotations cannot be turned into a JSON Schema: {exc}") from None
    input_schema.pop("title", None)
    text = inspect.cleandoc(description if description is not None else inspect.getdoc(fn) or "")
    info = ToolInfo(server, tool_name, text, input_schema, output_schema)
    # What a client sees if the tool is offered as a regular tool (excludedTools): MCP output
    # schemas are objects, so a scalar or list result is offered as text.
    definition = info.as_json()
    if not structured:
        definition.pop("outputSchema", None)
    info = ToolInfo(server, tool_name, text, input_schema, output_schema, definition=definition)
    is_async = inspect.iscoroutinefunction(fn)  # other callables returning an awaitable are awaited too
    return PythonTool(info, fn, is_async, arguments, returns, structured)


def _return_type(annotation: Any) -> tuple[TypeAdapter[Any] | None, dict[str, Any] | None, bool]:
    """(adapter, output schema, structured) for a return annotation."""
    if annotation in (inspect.Signature.empty, None, type(None), str, Any):
        return None, None, False
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    schema = adapter.json_schema(mode="serialization")
    target = schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = schema.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {})
    return adapter, schema, target.get("type") == "object"


def _model_arguments(
    adapter: TypeAdapter[Any], param: inspect.Parameter, arguments: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    value = adapter.validate_python(arguments)
    if param.kind == param.KEYWORD_ONLY:
        return (), {param.name: value}
    return (value,), {}


def _plain_arguments(validator: SchemaValidator, arguments: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    args, kwargs = validator.validate_python(arguments)
    return tuple(args), dict(kwargs)


class PythonTools:
    """The Python tools of a toolbox: a :class:`~gocode.mcp.provider.ToolProvider` for one server name."""

    def __init__(self, tools: Iterable[Callable[..., Any] | PythonTool], server: str = PYTHON_SERVER) -> None:
        self.name = server
        self.tools: dict[str, PythonTool] = {}
        for entry in tools:
            tool = entry if isinstance(entry, PythonTool) else python_tool(entry, server=server)
            if tool.info.server != server:
                tool = python_tool(tool.fn, name=tool.name, description=tool.info.description, server=server)
            if tool.name in self.tools:
                raise ConfigError(
                    f"two Python tools are named {tool.name!r}; give one another name: python_tool(fn, name=...)"
                )
            self.tools[tool.name] = tool
        self._listing = ServerTools(server, tuple(t.info for t in self.tools.values()))
        self._calls: set[anyio.CancelScope] = set()  # the calls in flight, cancelled by close()
        self._closed = False

    def close(self) -> None:
        """Answer every call in flight with an error and refuse new ones (the toolbox is closing).
        A sync function still running is abandoned in its daemon thread."""
        self._closed = True
        for scope in self._calls:
            scope.cancel()

    @property
    def known_tools(self) -> ServerTools:
        return self._listing

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any] | None,
        timeout: float,
        progress: ProgressFnT | None = None,
        caller: Caller | None = None,
    ) -> types.CallToolResult:
        """Validate, call and check one function; every failure is an ``isError`` result."""
        found = self.tools.get(tool)
        if found is None:
            known = ", ".join(self.tools) or "none"
            return _error(f"unknown Python tool {tool!r} (tools: {known})")
        try:
            args, kwargs = found.arguments(arguments or {})
        except ValidationError as exc:
            return _error(f"invalid arguments for {tool}: {_validation_text(exc)}")
        if self._closed:
            return _error(CLOSED.format(tool=tool))
        value: Any = None
        failure: BaseException | None = None
        with anyio.CancelScope() as closing:
            self._calls.add(closing)
            try:
                with anyio.move_on_after(timeout) as scope:
                    try:
                        if found.is_async:
                            value = await found.fn(*args, **kwargs)
                        else:
                            value = await _in_daemon_thread(functools.partial(found.fn, *args, **kwargs))
                            if inspect.isawaitable(value):  # a sync wrapper around a coroutine function
                                value = await _awaited(value)
                    except (Exception, SystemExit) as exc:  # the function's own failure is the program's error
                        failure = exc
            finally:
                self._calls.discard(closing)
        if closing.cancelled_caught:
            return _error(CLOSED.format(tool=tool))
        if scope.cancelled_caught:
            return _error(f"{tool} did not return within {timeout:g} s")
        if failure is not None:
            message = str(failure).strip()
            return _error(f"{type(failure).__name__}: {message}" if message else type(failure).__name__)
        return _answer(found, value)


CLOSED = "{tool}: the toolbox closed before it returned; the call is abandoned"


async def _in_daemon_thread(call: Callable[[], Any]) -> Any:
    """``call()`` in a daemon thread of its own (as many at once as anyio's worker threads).
    anyio's and the executors' threads are joined when the interpreter exits, so a function that
    never returns would hold the process however long it hangs; a daemon thread is not waited for.
    Cancelling the caller abandons the thread: Python cannot stop it, its answer is dropped."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()  # the caller's context variables, as anyio's threads have them

    def settle(value: Any, error: BaseException | None) -> None:
        if done.done():  # abandoned: no one waits for it
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(value)

    def work() -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            value = context.run(call)
        except BaseException as exc:  # handed to the caller, which decides what is the program's error
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: no one waits for the answer
            loop.call_soon_threadsafe(settle, value, error)

    async with anyio.to_thread.current_default_thread_limiter():
        threading.Thread(target=work, name="gocode python tool", daemon=True).start()
        return await done


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


def _answer(tool: PythonTool, value: Any) -> types.CallToolResult:
    """The result for a returned value, checked against the return annotation."""
    if tool.returns is None:
        if value is None:
            text = ""
        elif isinstance(value, str):
            text = value
        else:
            try:
                text = to_json(value, fallback=str).decode()
            except Exception:  # an object pydantic cannot serialise: its str() is the best text
                text = str(value)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
    try:
        checked = tool.returns.validate_python(value)
        data = tool.returns.dump_python(checked, mode="json")
    except ValidationError as exc:
        shown = _clip(repr(value), 200)
        return _error(
            f"{tool.name} returned {shown}, which its return annotation does not allow: {_validation_text(exc)}"
        )
    except Exception as exc:  # serialising the value failed
        return _error(f"{tool.name} returned a value that cannot be sent as JSON: {exc}")
    text = json.dumps(data, ensure_ascii=False)
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
    if tool.structured and isinstance(data, dict):
        return types.CallToolResult(content=content, structured_content=data)
    return types.CallToolResult(content=content)


def _validation_text(exc: ValidationError) -> str:
    """pydantic's errors in one line: ``field: message; …`` (no URLs, no input echo)."""
    parts = []
    for e in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(x) for x in e.get("loc", ()))
        parts.append(f"{where}: {e['msg']}" if where else e["msg"])
    return _clip("; ".join(parts), _ERROR_CHARS)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=_clip(message, _ERROR_CHARS))], is_error=True
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
