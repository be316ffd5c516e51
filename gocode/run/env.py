"""The environment a model's program starts with: never the controller's own.

The controller's environment holds its secrets (``GOCODE_TOKEN``, API keys of the agent it
serves, cloud credentials). A program gets only what running Go needs and what its servers
are configured with:

- unsandboxed (:func:`unsandboxed_env`): ``PATH``, ``HOME``, ``TMPDIR``, locale and timezone,
  the Go runtime's own variables when set (``GOMAXPROCS``, ``GODEBUG``, ``GOMEMLIMIT``,
  ``GOGC``, ``GOTRACEBACK``), ``GOCODE_SERVERS``, and in direct mode the ``env`` of every server
  the program starts itself (those servers inherit the program's environment);
- sandboxed (:func:`sandboxed_env`): even less — its scratch directory as ``HOME`` and
  ``TMPDIR``, no ``PATH``, and a memory limit for the Go runtime.

Pure functions: the caller passes the environment to pick from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

SERVERS_ENV = "GOCODE_SERVERS"

# Copied when set: what the Go runtime, its DNS/TLS code and ordinary tools read.
PASSED = (
    "PATH",
    "HOME",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TZ",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "GOMAXPROCS",
    "GODEBUG",
    "GOMEMLIMIT",
    "GOGC",
    "GOTRACEBACK",
)
PASSED_PREFIXES = ("LC_",)


def unsandboxed_env(
    environ: Mapping[str, str], servers_json: str, server_envs: Iterable[Mapping[str, str]] = ()
) -> dict[str, str]:
    """The environment of a program that runs without the sandbox (see the module doc)."""
    env = {k: v for k, v in environ.items() if k in PASSED or k.startswith(PASSED_PREFIXES)}
    for extra in server_envs:
        env.update(extra)
    env[SERVERS_ENV] = servers_json
    return env


def sandboxed_env(scratch: str, servers_json: str, memory_limit_bytes: int) -> dict[str, str]:
    """The environment of a sandboxed program: nothing of the controller's."""
    return {
        "HOME": scratch,
        "TMPDIR": scratch,
        "PATH": "/nonexistent",
        "LANG": "C.UTF-8",
        SERVERS_ENV: servers_json,
        "GOMEMLIMIT": str(memory_limit_bytes),
        "GODEBUG": "multipathtcp=0",
        "GOTRACEBACK": "single",
    }


def with_run_settings(env: Mapping[str, str], extra: Mapping[str, str] | None, godebug: str) -> dict[str, str]:
    """``env`` plus what one run adds: ``extra`` variables (a saved program's input) and Go
    runtime settings (``godebug``, after any the environment has)."""
    out = {**env, **(extra or {})}
    if godebug:
        out["GODEBUG"] = ",".join(filter(None, [out.get("GODEBUG", ""), godebug]))
    return out
