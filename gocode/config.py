"""Configuration: which MCP servers exist and how code mode is set up per model.

The file format is CPE's (``mcpServers``, ``defaults.codeMode``, ``models[].codeMode`` with a
``ref`` per model), in YAML or JSON. gocode owns ``mcpServers`` and ``codeMode`` and checks
them strictly; ``models[]`` and ``defaults`` may carry the agent's own keys (CPE's
``display_name``, …), which gocode ignores. A model's endpoint (``type``, ``id``, ``base_url``,
``api_key_env``) is typed and checked: ``gocode ask`` uses it.

Loading is pure apart from reading the file and the environment: ``${VAR}`` and
``${VAR:-default}`` in any string are expanded from ``os.environ`` before validation, and
every problem becomes one :class:`ConfigError` naming the file and the key.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gocode.errors import ConfigError, UnsetVariable
from gocode.paths import DEFAULT_CONFIG_NAME

# Under the TypeScript SDK's 60 s request timeout, with room for the build (see README, Timeouts).
DEFAULT_TIMEOUT_S = 50.0
DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024
DEFAULT_CONNECT_TIMEOUT_S = 60.0
DEFAULT_MODEL_TIMEOUT_S = 120.0
DEFAULT_MODEL_MAX_TOKENS = 4096

# Run users: no account, in a range systemd leaves unused (its container ranges end below it).
DEFAULT_UID_RANGE = "1879048192-1879049215"
_MAX_UID = 0xFFFFFFFE  # (uid_t)-1 means "no change" to the kernel


def uid_range(text: str) -> range:
    """``"START-END"`` (both included) as a range, or a ValueError saying what is wrong."""
    m = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", text)
    if not m:
        raise ValueError(f"uidRange {text!r} must be START-END, two uids, e.g. 200000-200063")
    start, end = int(m[1]), int(m[2])
    if not 0 < start <= end < _MAX_UID:
        raise ValueError(f"uidRange {text!r}: need 0 < START <= END < {_MAX_UID} (uid 0 is root)")
    if start <= 65534 <= end:
        raise ValueError(f"uidRange {text!r} includes 65534 (nobody), which other processes share")
    return range(start, end + 1)


_SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


NOTE_MAX_CHARS = 2000  # a server's config note; the model view shows at most its first 300


class OAuthConfig(_Strict):
    """How gocode signs in to a remote server with OAuth (docs/oauth.md): the MCP SDK's client
    finds the authorization server from the server's 401, registers (dynamically, by a client ID
    metadata document, or with ``clientId`` given) and gets a token, kept by gocode for the URL."""

    type: Literal["oauth"]
    grant: Literal["authorization_code", "client_credentials"] = Field(
        default="authorization_code",
        description="authorization_code: a person signs in in a browser; client_credentials: a machine client",
    )
    client_id: str | None = Field(default=None, alias="clientId", min_length=1, max_length=2048)
    client_secret: str | None = Field(default=None, alias="clientSecret", min_length=1, max_length=2048)
    private_key_file: str | None = Field(
        default=None,
        alias="privateKeyFile",
        min_length=1,
        max_length=4096,
        description="a PEM private key that signs this client's JWT assertion (private_key_jwt), instead of clientSecret",
    )
    signing_algorithm: Literal[
        "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"
    ] = Field(
        default="RS256", alias="signingAlgorithm", description="the JWT algorithm privateKeyFile's key signs with"
    )
    client_metadata_url: str | None = Field(
        default=None,
        alias="clientMetadataUrl",
        description="an https URL of this client's metadata document, used as its client ID where the server allows",
    )
    scopes: tuple[str, ...] | None = Field(
        default=None, description="the scopes to ask for; default: as the server says"
    )
    redirect_port: int = Field(
        default=0,
        ge=0,
        le=65535,
        alias="redirectPort",
        description="the port of the sign-in redirect on 127.0.0.1; 0: any",
    )
    open_browser: bool = Field(default=True, strict=True, alias="openBrowser")
    login_timeout: float = Field(
        default=300.0, gt=0, le=3600, alias="loginTimeout", description="how long a sign-in may take, seconds"
    )
    issuer: str | None = Field(
        default=None,
        description="the authorization server (its issuer URL) the client credentials belong to; they go nowhere else",
    )
    trusted_hosts: tuple[str, ...] = Field(
        default=(),
        alias="trustedHosts",
        description="hosts besides the authorization server's own its endpoints may be on",
    )

    @model_validator(mode="after")
    def _check_grant(self) -> OAuthConfig:
        if self.client_secret is not None and self.client_id is None:
            raise ValueError("`clientSecret` needs `clientId`")
        if self.private_key_file is not None and self.grant != "client_credentials":
            raise ValueError("`privateKeyFile` is for `grant: client_credentials`")
        if self.private_key_file is not None and not os.path.isabs(os.path.expanduser(self.private_key_file)):
            raise ValueError(
                f"`privateKeyFile` must be an absolute path (or start with ~/), got {self.private_key_file!r}"
            )
        if self.private_key_file is not None and self.client_secret is not None:
            raise ValueError("give `clientSecret` or `privateKeyFile`, not both")
        if self.grant == "client_credentials" and (
            self.client_id is None or (self.client_secret is None and self.private_key_file is None)
        ):
            raise ValueError("`grant: client_credentials` needs `clientId` and `clientSecret` (or `privateKeyFile`)")
        if self.client_metadata_url is not None and not re.fullmatch(
            r"https://[^/?#]+/[^?#]+", self.client_metadata_url
        ):
            raise ValueError(f"`clientMetadataUrl` must be an https URL with a path, got {self.client_metadata_url!r}")
        if any(not s or any(c.isspace() for c in s) for s in self.scopes or ()):
            raise ValueError("each of `scopes` must be one word")
        return self


class ServerConfig(_Strict):
    """One MCP server: stdio (``command``) or remote (``type: http|sse`` with ``url``)."""

    type: Literal["stdio", "http", "sse"] = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    auth: OAuthConfig | None = None
    timeout: float = Field(default=DEFAULT_CONNECT_TIMEOUT_S, gt=0, description="connect timeout, seconds")
    enabled_tools: tuple[str, ...] | None = Field(default=None, alias="enabledTools")
    disabled_tools: tuple[str, ...] = Field(default=(), alias="disabledTools")
    learn_shapes: bool = Field(
        default=True,
        strict=True,
        alias="learnShapes",
        description="record the shape of this server's results (docs/result-shapes.md)",
    )
    infer_result_types: bool = Field(
        default=True,
        strict=True,
        alias="inferResultTypes",
        description="type a tool's Go result by the JSON its results had, where it declares no output schema",
    )

    note: str = Field(
        default="",
        strict=True,
        max_length=NOTE_MAX_CHARS,
        description="what the model should know of this server (e.g. the repository it serves), shown once above its tools",
    )

    @model_validator(mode="before")
    @classmethod
    def _infer_type(cls, data: Any) -> Any:
        # CPE requires `type`; Claude Desktop style configs omit it. A url without a type is HTTP.
        if isinstance(data, dict) and "type" not in data and "url" in data and "command" not in data:
            return {**data, "type": "http"}
        return data

    @model_validator(mode="after")
    def _check_transport(self) -> ServerConfig:
        if self.type == "stdio":
            if not self.command:
                raise ValueError("a stdio server needs `command` (or set `type: http|sse` with `url`)")
            if self.url or self.headers or self.auth:
                raise ValueError("`url`/`headers`/`auth` are for `type: http|sse`; this server is stdio")
        else:
            if not self.url:
                raise ValueError(f"a `type: {self.type}` server needs `url`")
            if not re.match(r"^https?://", self.url):
                raise ValueError(f"`url` must start with http:// or https://, got {self.url!r}")
            if self.command or self.args or self.env or self.cwd:
                raise ValueError(f"`command`/`args`/`env`/`cwd` are for stdio servers; this one is {self.type}")
            if self.auth is not None and any(k.lower() == "authorization" for k in self.headers):
                raise ValueError("set either `auth` or an `Authorization` header, not both")
        if self.enabled_tools is not None and self.disabled_tools:
            raise ValueError("use either `enabledTools` or `disabledTools`, not both")
        return self

    def allows(self, tool: str) -> bool:
        """Whether the server's own tool filter keeps ``tool``."""
        if self.enabled_tools is not None:
            return tool in self.enabled_tools
        return tool not in self.disabled_tools


class SandboxLimits(_Strict):
    """Limits of a sandboxed program (``codeMode.limits``); see docs/sandbox.md."""

    memory_mb: int = Field(default=512, ge=64, alias="memoryMB", description="heap (RLIMIT_DATA); GOMEMLIMIT is 80%")
    address_space_mb: int | None = Field(
        default=None, ge=1024, alias="addressSpaceMB", description="RLIMIT_AS; default memoryMB + 4096"
    )
    cpu_seconds: int | None = Field(
        default=None, ge=1, alias="cpuSeconds", description="RLIMIT_CPU; default: the timeout plus one second"
    )
    file_size_mb: int = Field(default=64, ge=1, alias="fileSizeMB", description="largest file it may write")
    open_files: int = Field(default=256, ge=16, alias="openFiles")
    scratch_mb: int = Field(default=256, ge=1, alias="scratchMB", description="total size of its scratch directory")
    threads: int = Field(
        default=2048, ge=64, description="processes and threads of one run (its cgroup's pids.max, or RLIMIT_NPROC)"
    )
    user: Literal["auto", "self", "nobody"] = Field(
        default="auto", description="who the program runs as; auto: nobody when gocode runs as root, else self"
    )
    uid_range: str = Field(
        default=DEFAULT_UID_RANGE,
        alias="uidRange",
        description="START-END: the uids a run user is taken from (one per running program), when runs "
        "switch users; none may be an account's",
    )

    @field_validator("uid_range")
    @classmethod
    def _check_uid_range(cls, v: str) -> str:
        uid_range(v)
        return v

    @property
    def uids(self) -> range:
        """``uidRange`` as a range."""
        return uid_range(self.uid_range)


class ApprovalConfig(_Strict):
    """``codeMode.approval``: which programs are held until someone approves them (docs/approvals.md).

    A tool needs approval when it matches ``ask``; else not when it matches ``allow``; else its
    MCP annotations decide (``readOnlyHint: true`` never asks, ``destructiveHint: true`` asks);
    else ``unannotated``. Patterns are globs on ``server.tool``.
    """

    enabled: bool = True
    ask: tuple[str, ...] = Field(default=(), description="server.tool globs that always need approval")
    allow: tuple[str, ...] = Field(default=(), description="server.tool globs that never do")
    unannotated: Literal["ask", "allow"] = Field(
        default="allow", description="tools whose server sets neither readOnlyHint nor destructiveHint"
    )

    @field_validator("ask", "allow")
    @classmethod
    def _check_patterns(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for p in patterns:
            if not p.strip() or any(c in p for c in "\n\r\0"):
                raise ValueError(f"approval pattern {p!r} must be a non-empty server.tool glob on one line")
        return patterns


class WorkspaceConfig(_Strict):
    """``codeMode.workspace``: the directory programs keep files in between calls (docs/workspace.md)."""

    enabled: bool = True
    scope: Literal["model", "session"] = Field(
        default="model", description="one directory per model, or per client session (MCP sessions)"
    )
    max_mb: int = Field(default=256, ge=1, alias="maxMB", description="size cap of one workspace")
    total_mb: int | None = Field(
        default=None,
        ge=1,
        alias="totalMB",
        description="size cap of a model's workspaces together (scope session: all its sessions); default 4 × maxMB",
    )
    dir: str | None = Field(
        default=None,
        description="where workspaces live; default $GOCODE_WORKSPACES or ~/.local/state/gocode/workspaces",
    )
    id: str | None = Field(
        default=None,
        description="whose workspaces these are; default a hash of the config file's path (docs/workspace.md)",
    )

    @field_validator("id")
    @classmethod
    def _plain_id(cls, value: str | None) -> str | None:
        # Part of a directory name: no separators, no dots leading it.
        if value is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}", value):
            raise ValueError("must be 1-32 letters, digits, '-' or '_', starting with a letter or digit")
        return value

    @model_validator(mode="after")
    def _total_holds_one(self) -> WorkspaceConfig:
        if self.total_mb is not None and self.total_mb < self.max_mb:
            raise ValueError(f"totalMB ({self.total_mb}) must be at least maxMB ({self.max_mb})")
        return self

    @property
    def total_cap(self) -> int:
        """Bytes a model's workspaces may hold together."""
        return (self.total_mb if self.total_mb is not None else 4 * self.max_mb) << 20


class CodeModeConfig(_Strict):
    """``codeMode`` in ``defaults`` or a model. A model's block replaces the default one whole (as in CPE)."""

    enabled: bool | Literal["auto"] = Field(
        default=True,
        description="auto: code mode only when the tools' classic definitions are large; see docs/model-view.md",
    )
    disclosure: Literal["auto", "full", "index"] = Field(
        default="auto", description="how much of the Go declarations the description shows; see docs/model-view.md"
    )
    # What the execute_go_code description may cost in o200k tokens (rules included). 2,000 leaves
    # room for search_go_tools' own definition under 2,500, and shows in full the tools of a few
    # small servers (time, fetch, git, memory each fit alone; see docs/model-view.md).
    description_tokens: int = Field(
        default=2000, ge=200, alias="descriptionTokens", description="token budget of the execute_go_code description"
    )
    excluded_tools: tuple[str, ...] = Field(default=(), alias="excludedTools")
    timeout: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, description="per-run wall clock, seconds")
    max_timeout: float | None = Field(
        default=None, gt=0, alias="maxTimeout", description="upper bound for a timeout asked for per call"
    )
    max_output_bytes: int = Field(default=DEFAULT_MAX_OUTPUT_BYTES, gt=0, alias="maxOutputBytes")
    sandbox: Literal["auto", "off", "on", "strict", "best-effort"] = Field(
        default="auto", description="confine the program: see docs/sandbox.md"
    )
    limits: SandboxLimits = Field(default_factory=SandboxLimits)
    approval: ApprovalConfig = Field(default_factory=ApprovalConfig)
    workdir: WorkspaceConfig = Field(default_factory=WorkspaceConfig, alias="workspace")
    max_concurrent_runs: int | None = Field(
        default=None, ge=1, alias="maxConcurrentRuns", description="programs at once per process; default max(2, cores)"
    )
    max_queued_runs: int | None = Field(
        default=None, ge=0, alias="maxQueuedRuns", description="programs waiting for a slot; default 4 x the bound"
    )
    saved_programs: bool = Field(
        default=False, alias="savedPrograms", description="offer save_go_program and the saved programs as tools"
    )
    saved_programs_share: str | None = Field(
        default=None,
        alias="savedProgramsShare",
        description="a name: every model (of any config) that sets the same one shares its saved programs; "
        "default: each config and model keeps its own",
    )

    @field_validator("saved_programs_share")
    @classmethod
    def _check_share(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^[a-z0-9][a-z0-9_-]{0,63}$", v):
            raise ValueError(
                f"savedProgramsShare {v!r} must be lowercase letters, digits, '_' or '-', starting with a letter "
                "or digit (64 characters at most)"
            )
        return v

    @field_validator("sandbox", mode="before")
    @classmethod
    def _sandbox_bool(cls, v: Any) -> Any:
        # YAML reads a bare on/off as a boolean.
        return {True: "on", False: "off"}.get(v, v) if isinstance(v, bool) else v

    def clamp_timeout(self, requested: float | None) -> float:
        """The timeout a run gets: the requested one (if any) capped by ``maxTimeout``."""
        timeout = self.timeout if requested is None else requested
        if self.max_timeout is not None:
            timeout = min(timeout, self.max_timeout)
        return timeout


class Defaults(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)
    code_mode: CodeModeConfig = Field(default_factory=CodeModeConfig, alias="codeMode")
    model: str | None = None


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ModelConfig(BaseModel):
    """One entry of ``models[]``: its codeMode, and (for ``gocode ask``) how to reach the model.

    ``type`` is the API the endpoint speaks (``openai``: Chat Completions, which local servers
    such as vLLM, llama.cpp and Ollama also speak; ``anthropic``: Messages); other values are
    kept for CPE but ``gocode ask`` refuses them. The key is read from the environment variable
    ``api_key_env`` names, never from the file.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)
    ref: str = Field(min_length=1)
    code_mode: CodeModeConfig | None = Field(default=None, alias="codeMode")
    type: str | None = Field(
        default=None,
        validation_alias=AliasChoices("type", "provider"),
        description="the API the endpoint speaks: openai (Chat Completions) or anthropic (Messages)",
    )
    id: str | None = Field(default=None, min_length=1, description="the model name the API expects")
    base_url: str | None = Field(default=None, description="the endpoint; default: the provider's own")
    api_key_env: str | None = Field(default=None, description="the environment variable holding the API key")
    timeout: float = Field(default=DEFAULT_MODEL_TIMEOUT_S, gt=0, description="per request, seconds")
    max_tokens: int = Field(default=DEFAULT_MODEL_MAX_TOKENS, gt=0, description="longest reply, tokens")

    @field_validator("type")
    @classmethod
    def _lower_type(cls, v: str | None) -> str | None:
        return v.strip().lower() if v is not None else None

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^https?://[^\s/]+", v):
            raise ValueError(f"`base_url` must start with http:// or https:// and name a host, got {v!r}")
        return v

    @field_validator("api_key_env")
    @classmethod
    def _check_key_env(cls, v: str | None) -> str | None:
        if v is not None and not _ENV_NAME.match(v):
            # The value is not echoed: it may be the key itself, pasted in the wrong place.
            raise ValueError(
                "`api_key_env` must be the name of an environment variable (letters, digits, _), not the key"
            )
        return v


class Config(BaseModel):
    """A whole config file. ``source`` is where it came from, for messages."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    mcp_servers: dict[str, ServerConfig] = Field(default_factory=dict, alias="mcpServers")
    defaults: Defaults = Field(default_factory=Defaults)
    models: tuple[ModelConfig, ...] = ()
    # Keys CPE's file has that gocode does not use; accepted so one file serves both.
    version: str | None = None
    subagent: dict[str, Any] | None = None
    source: str = Field(default="<config>", exclude=True)

    @field_validator("mcp_servers")
    @classmethod
    def _check_names(cls, servers: dict[str, ServerConfig]) -> dict[str, ServerConfig]:
        for name in servers:
            if not _SERVER_NAME.match(name):
                raise ValueError(
                    f"server name {name!r} must start with a letter or digit and use only letters, digits, "
                    "'_', '-' or '.' (64 characters at most)"
                )
        return servers

    @model_validator(mode="after")
    def _check_models(self) -> Config:
        seen: set[str] = set()
        for model in self.models:
            if model.ref in seen:
                raise ValueError(f"model ref {model.ref!r} appears twice in `models`")
            seen.add(model.ref)
        return self

    def code_mode_for(self, ref: str | None) -> CodeModeConfig:
        """The effective codeMode for a model ref (``None``: ``defaults.model``, else the defaults)."""
        ref = ref or self.defaults.model
        if ref is None:
            return self.defaults.code_mode
        for model in self.models:
            if model.ref == ref:
                return model.code_mode or self.defaults.code_mode
        known = ", ".join(m.ref for m in self.models) or "none defined"
        raise ConfigError(f"{self.source}: unknown model ref {ref!r} (models: {known})")


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class _References(dict[str, str]):
    """An environment under which every ``${VAR}`` stays as written (see :func:`load_config`)."""


KEEP_REFERENCES: Mapping[str, str] = _References()


def expand_env(value: Any, env: Mapping[str, str], where: str = "") -> Any:
    """Expand ``${VAR}`` / ``${VAR:-default}`` in every string of a parsed document.

    An unset variable without a default is an error naming the key, rather than a silent
    empty string in a header or an argument.
    """
    if isinstance(value, str):

        def sub(match: re.Match[str]) -> str:
            if env is KEEP_REFERENCES:
                return match.group(0)
            name, default = match.group(1), match.group(2)
            if name in env:
                return env[name]
            if default is not None:
                return default
            raise UnsetVariable(name, where)

        return _VAR.sub(sub, value)
    if isinstance(value, dict):
        return {k: expand_env(v, env, f"{where}.{k}" if where else str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_env(v, env, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def parse_config(text: str, source: str = "<config>", env: Mapping[str, str] | None = None) -> Config:
    """Parse YAML or JSON text into a :class:`Config`; raises :class:`ConfigError`."""
    try:
        data = json.loads(text) if source.endswith(".json") else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{source}: not valid {'JSON' if source.endswith('.json') else 'YAML'}: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping with `mcpServers`, got {type(data).__name__}")
    try:
        data = expand_env(data, os.environ if env is None else env)
    except UnsetVariable as exc:
        raise ConfigError(
            f"{source}: {exc.where}: environment variable {exc.name} is not set "
            f"(set it, or write ${{{exc.name}:-default}})"
        ) from None
    _check_open_blocks(data, source)
    try:
        return Config.model_validate({**data, "source": source})
    except ValidationError as exc:
        raise ConfigError(_describe(exc, source)) from None


def _check_open_blocks(data: dict[str, Any], source: str) -> None:
    """``models[]`` and ``defaults`` keep keys gocode does not know (the agent's own), so a
    misspelt key of gocode's would be silently ignored there: one that differs from a known key
    only in case or separators is an error, one that is merely close a warning, each naming it."""
    blocks: list[tuple[str, Any, type[BaseModel]]] = [("defaults", data.get("defaults"), Defaults)]
    models = data.get("models")
    if isinstance(models, list):
        blocks += [(f"models[{i}]", m, ModelConfig) for i, m in enumerate(models)]
    for where, block, model in blocks:
        if not isinstance(block, dict):
            continue  # the model's validation says what is wrong with it
        known = {key for n, f in model.model_fields.items() for key in (n, f.alias) if key}
        # Each spelling folds to the key as the README writes it (the alias: `codeMode`).
        folded = {_fold(k): f.alias or n for n, f in model.model_fields.items() for k in (n, f.alias) if k}
        for key in block:
            if not isinstance(key, str) or key in known:
                continue
            if (same := folded.get(_fold(key))) is not None:
                raise ConfigError(f"{source}: {where}.{key}: unknown key; did you mean `{same}`?")
            if close := difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.8):
                logging.getLogger("gocode.config").warning(
                    "%s: %s.%s: not a gocode key (kept for your agent); did you mean `%s`?",
                    source,
                    where,
                    key,
                    close[0],
                )


def _fold(key: str) -> str:
    return re.sub(r"[-_]", "", key).lower()


def load_config(path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Read a config file (default ``./gocode.yaml``); raises :class:`ConfigError`.

    ``env`` replaces ``os.environ`` for ``${VAR}`` expansion; :data:`KEEP_REFERENCES` keeps every
    reference as written, for what is shipped elsewhere and expanded there (a built binary).
    """
    p = Path(path) if path is not None else Path(DEFAULT_CONFIG_NAME)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        hint = " (pass -c/--config PATH, or create gocode.yaml here)" if path is None else ""
        raise ConfigError(f"{p}: config file not found{hint}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read config file: {exc}") from None
    return parse_config(text, str(p), env)


def _describe(exc: ValidationError, source: str) -> str:
    """One paragraph per problem, each naming the dotted key, in the file's own spelling."""
    lines = []
    for err in exc.errors():
        loc = ""
        for part in err["loc"]:
            if isinstance(part, int):
                loc += f"[{part}]"
            elif not str(part).startswith("function-"):
                loc += f".{part}" if loc else str(part)
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            parent_keys = _known_keys(err["loc"][:-1])
            msg = "unknown key" + (f" (known keys: {', '.join(parent_keys)})" if parent_keys else "")
        lines.append(f"{source}: {loc or '(top level)'}: {msg}")
    return "\n".join(lines)


def _known_keys(parent: tuple[Any, ...]) -> list[str]:
    model: type[BaseModel] | None = Config
    for part in parent:
        if model is Config and part == "mcpServers":
            model = None  # next part is a server name
            continue
        if model is None:
            model = ServerConfig
            continue
        if isinstance(part, int):
            continue
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        if field is None:
            return []
        ann = field.annotation
        model = next(
            (
                m
                for m in (CodeModeConfig, SandboxLimits, Defaults, ModelConfig, ServerConfig)
                if m is ann or m in getattr(ann, "__args__", ())
            ),
            None,
        )
        if part == "models":
            model = ModelConfig
    if model is None:
        return []
    return sorted(f.alias or n for n, f in model.model_fields.items() if n != "source")
