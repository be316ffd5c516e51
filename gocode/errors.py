"""Every exception gocode defines, grouped by the phase in which it happens.

What a caller of the package may see (``phase`` says where it failed, ``str()`` is the whole
message, ready for a person or a model)::

    GocodeError                 base
    ├── ConfigError             "config": missing/unparsable file, wrong key or type, unknown model
    ├── ToolchainError          "toolchain": no ``go`` on PATH, Go too old or not fetched, warm-up failed
    │   ├── CheckTimeout        the type-check helper did not answer in time (it is replaced)
    │   └── SumdbError          Go's checksum database answered unsigned, malformed or unproven
    ├── DiscoveryError          "discovery": a server did not start, connect, or list its tools
    ├── SetUpError              "setup": the machine's one-off set-up failed (no program can be built)
    ├── SandboxError            "sandbox": the sandbox asked for cannot be provided here
    ├── Busy                    "busy": no slot for a program now (queue full, or the wait too long)
    ├── StepError               "step": a step request refused (continuation, answers, declarations)
    ├── RecordingError          "replay": a recording missing, unreadable, or for other tools
    ├── UnknownToolError        "call": a call named a tool the toolbox does not offer (also LookupError)
    ├── CallError               "call": ``gocode call`` refused a call before making it
    ├── ExecRequestError        "usage": a ``gocode exec`` request whose options do not go together
    ├── SavedProgramError       a program that cannot be saved, built or found
    └── ModelError              "model": the agent's model endpoint could not be used

Signals that one part of gocode raises and another turns into an answer (a result, a message,
an HTTP status); none reaches a caller of the package as itself::

    Exception
    ├── ToolProviderError       a call a tool provider could not make (its tool's failures are results)
    │   ├── UpstreamError       the call could not reach its server
    │   └── OfferError          a resource, prompt or completion that cannot be asked for (no owner, unknown)
    ├── AdmissionRefused        the loopback's gate will not admit a request (too many, run ended)
    ├── ReplayError             a replay pass that cannot go on (divergent call, bad record)
    ├── BuildTimeout            a program's own build outlasted the run's timeout (a ``timeout`` result)
    ├── NoApprover              there is no one to ask for an approval
    ├── AskStopped              the person at the terminal ended the input, or the question was withdrawn
    ├── UnsetVariable           a ``${VAR}`` in the config with no value (becomes a ConfigError)
    └── AttemptFailed           the agent's attempt ended at ``phase`` (becomes its transcript)
    ValueError
    ├── SearchRequestError      a ``search_go_tools`` request that cannot be answered
    ├── FormError               a server's elicitation form that cannot be asked (it is declined)
    └── ScriptError             a malformed expectation in a smoke script
    RuntimeError
    └── EmbeddingUnavailable    a search model that was to be loaded did not load
    ConnectionError
    └── ServerExited            a stdio server's output ended while its session was open
    OSError
    └── WorkspaceError          a program's workspace that cannot be opened safely

Failures of the model's program itself (compile errors, runtime errors, timeouts) are not
exceptions: they are answers, returned as a :class:`gocode.run.runner.RunResult` with ``ok=False``.

``SchemaError`` and ``CodeError`` were exported and never raised (a schema gocode cannot type
falls back to a documented type; code that cannot be placed is answered like a compile error).
They stay importable, with a DeprecationWarning, and nothing raises them.
"""

from __future__ import annotations

import warnings
from functools import cache
from typing import Literal


class GocodeError(Exception):
    """Base class: every error gocode raises on purpose. ``str()`` is a complete, user-facing message."""

    phase = "gocode"


class ConfigError(GocodeError):
    phase = "config"


class ToolchainError(GocodeError):
    phase = "toolchain"


class CheckTimeout(ToolchainError):
    """The type-check helper did not answer in time (it was stopped; the next call starts a new one)."""


class SumdbError(ToolchainError):
    """Go's checksum database did not vouch for a download: its answer is malformed, its tree
    head not signed by its key, or the record not proven to be in that tree."""


class DiscoveryError(GocodeError):
    phase = "discovery"

    def __init__(
        self,
        message: str,
        *,
        server: str | None = None,
        summary: str = "",
        brief: str = "",
        stderr: str = "",
        exit_status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.server = server
        self.exit_status = exit_status  # how a stdio server's process ended, when it did
        self.summary = summary or message  # the message without the server's stderr
        # What a model is told: the summary naming the server only, never its command line
        # (its ${VAR}s expanded, perhaps a secret) or URL, which stay with the operator.
        self.brief = brief or self.summary
        self.stderr = stderr  # the server's stderr tail (also at the end of the message)


class SetUpError(GocodeError):
    """The machine's one-off set-up failed: no program can be built until it is fixed."""

    phase = "setup"


class SandboxError(GocodeError):
    """The sandbox asked for cannot be provided here (the program does not run)."""

    phase = "sandbox"


class Busy(GocodeError):
    """No slot for a program now: the queue is full, or the wait would outlast the call's timeout."""

    phase = "busy"


class StepError(GocodeError):
    """A step request gocode refuses: a bad continuation, bad answers, bad tool declarations."""

    phase = "step"


class RecordingError(GocodeError):
    """A recording that cannot be found, read, or used against the current tools."""

    phase = "replay"


class UnknownToolError(GocodeError, LookupError):
    """A call named a tool this toolbox does not offer."""

    phase = "call"


class CallError(GocodeError):
    """A call refused before it was made: an unknown tool, or arguments its schema does not allow."""

    phase = "call"


class ExecRequestError(GocodeError, ValueError):
    """A request to run code once (:class:`gocode.execution.ExecRequest`) whose options do not
    go together, or that names no code; nothing was run. The message names the options as
    ``gocode exec`` spells them."""

    phase = "usage"


class SavedProgramError(GocodeError):
    """A program that cannot be saved, built or found (the message says why)."""


class ModelError(GocodeError):
    """The model's endpoint could not be used: no key, unreachable, refused, or a reply that
    cannot be read. ``status`` is the HTTP status when there was one."""

    phase = "model"

    def __init__(
        self, message: str, *, status: int | None = None, attempts: int = 0, retry_waits_s: list[float] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        # The requests sent before giving up and the waits between them (none for a request never sent).
        self.attempts = attempts
        self.retry_waits_s = list(retry_waits_s or [])


# --- signals turned into answers where they are caught ----------------------------------------------


class ToolProviderError(Exception):
    """A call a provider could not make (the tool's own failures are ``isError`` results)."""


class UpstreamError(ToolProviderError):
    """A call that could not reach its server (the server's own errors are results)."""


class OfferError(ToolProviderError):
    """A resource, prompt or completion that cannot be asked for: a URI no server (or several)
    owns, an unknown prompt, a server that is down. Its message says which and why."""


class AdmissionRefused(Exception):
    """A request the loopback's gate will not admit: too many waiting, or the run has ended."""


class ReplayError(Exception):
    """A pass that cannot go on: a divergent call, a record that does not decode, a dropped result."""


class BuildTimeout(Exception):
    """A program's own build (its type check, compile and link) did not end within ``limit``
    seconds, the run's timeout: what it had started was stopped, and the run answers ``timeout``."""

    def __init__(self, limit: float) -> None:
        super().__init__(f"the program's build did not finish within {limit:g} s")
        self.limit = limit


class NoApprover(Exception):
    """There is no one to ask."""


class UnsetVariable(Exception):
    """A ``${VAR}`` in the config that has no value (the config reports it as a ConfigError)."""

    def __init__(self, name: str, where: str) -> None:
        self.name, self.where = name, where


# Where an agent's attempt can end without an answer.
FailPhase = Literal["model", "tools", "code", "cannot", "setup", "approval"]


class AttemptFailed(Exception):
    """The agent's attempt ended at ``phase`` (the orchestrator writes it into the transcript)."""

    def __init__(self, phase: FailPhase, message: str) -> None:
        super().__init__(message)
        self.phase: FailPhase = phase


class SearchRequestError(ValueError):
    """A search_go_tools call that cannot be answered (no query or names, bad types, unknown names)."""


class AskStopped(Exception):
    """The person asked at the terminal ended the input (Ctrl-D), or the question was withdrawn
    (the call ended, the answer timed out): the elicitation is answered ``cancel``."""


class FormError(ValueError):
    """A server's requested schema that cannot be asked as a form (too many fields, a type a
    form has no prompt for, a required field without a default when answering by defaults)."""


class ScriptError(ValueError):
    """A malformed expectation in a script file."""


class EmbeddingUnavailable(RuntimeError):
    """A model that was to be loaded for a query or tools not embedded before failed to load."""


class ServerExited(ConnectionError):
    """A stdio server's output ended while its session was open (the process exited)."""


class WorkspaceError(OSError):
    """A workspace that cannot be opened safely (something not a directory on the way to it)."""


# --- deprecated names ---------------------------------------------------------------------------

_DEPRECATED = {"SchemaError": "schema", "CodeError": "code"}


@cache
def _deprecated(name: str) -> type[GocodeError]:
    return type(name, (GocodeError,), {"phase": _DEPRECATED[name], "__module__": __name__})


def __getattr__(name: str) -> type[GocodeError]:
    if name not in _DEPRECATED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"gocode.errors.{name} is deprecated: gocode never raises it", DeprecationWarning, stacklevel=2)
    return _deprecated(name)
