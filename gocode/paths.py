"""Where gocode keeps its cache and per-run state, from the environment, and where it looks
for its config.

Every stage that stores something (the listing cache, the Go module cache, the search vectors)
resolves its directory here, so none has to import another stage for it.
"""

from __future__ import annotations

import os
from pathlib import Path

VECTORS_DIR = "search-vectors"  # the semantic search index's directory in the cache
OPTIMIZED_MODELS_DIR = "search-models"  # the search models' graphs as onnxruntime optimised them
DEFAULT_CONFIG_NAME = "gocode.yaml"  # the config file read when none is named (in the working directory)


def state_dir() -> Path | None:
    """The writable directory for per-run files and built programs, if apart from the cache."""
    env = os.environ.get("GOCODE_STATE_DIR")
    return Path(env).expanduser() if env else None


def cache_dir() -> Path:
    if env := os.environ.get("GOCODE_CACHE_DIR"):
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gocode"


def oauth_dir() -> Path:
    """Where OAuth tokens and client registrations are kept (``GOCODE_OAUTH_DIR`` overrides): the
    user's state directory, not the cache (pruned, maybe shared read-only by replicas) nor the
    state directory above (programs write there)."""
    if env := os.environ.get("GOCODE_OAUTH_DIR"):
        return Path(env).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "gocode" / "oauth"
