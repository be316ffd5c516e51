"""OAuth tokens and client registrations kept on disk, one file per server (docs/oauth.md).

A :class:`TokenFile` is the MCP SDK's ``TokenStorage`` for one server URL (and configured
client ID): a JSON file of mode 0600 in a directory of mode 0700 under
:func:`gocode.paths.oauth_dir`, written whole by rename, so a reader never sees half of it. A
file another user owns, that others may read, or that is not JSON of the expected shape is
ignored (the flow signs in again) and named in a warning without its content. Nothing here
prints, logs or returns a token except :meth:`TokenFile.bearer` (for a direct run's program).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import time
from pathlib import Path
from typing import Any

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import ValidationError

from gocode.files import replace_file
from gocode.paths import oauth_dir

log = logging.getLogger("gocode.mcp.oauth")

MAX_FILE_BYTES = 1 << 20  # a token file is a few KiB; anything larger is not ours
EXPIRY_MARGIN_S = 30.0  # a token this close to its end counts as expired (the call takes time)


def key(url: str, client_id: str | None) -> str:
    """The file name for a server URL and configured client ID (the secret is not part of it)."""
    return hashlib.sha256(f"{url}\n{client_id or ''}".encode()).hexdigest()[:40] + ".json"


class TokenFile:
    """The kept tokens and registration of one server; safe to use from one event loop at a time
    (the SDK's flow holds its own lock), and across processes (each write replaces the file)."""

    def __init__(self, url: str, client_id: str | None = None, directory: Path | None = None) -> None:
        self.directory = directory or oauth_dir()
        self.path = self.directory / key(url, client_id)

    def _read(self) -> dict[str, Any]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return {}
        except OSError as e:
            log.warning("ignoring the OAuth token file %s: %s", self.path, e.strerror)
            return {}
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
                log.warning("ignoring the OAuth token file %s: not a private file of this user", self.path)
                return {}
            raw = f.read(MAX_FILE_BYTES + 1)
        try:
            doc = json.loads(raw) if len(raw) <= MAX_FILE_BYTES else None
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            log.warning("ignoring the OAuth token file %s: not what gocode writes", self.path)
            return {}
        return doc

    def _write(self, doc: dict[str, Any]) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(self.directory, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            raise PermissionError(f"{self.directory} must be a directory only its owner can open (mode 0700)")
        replace_file(self.path, json.dumps(doc).encode(), prefix=".token-")  # mode 0600

    def _part(self, name: str, model: type[OAuthToken] | type[OAuthClientInformationFull]) -> Any:
        value = self._read().get(name)
        if value is None:
            return None
        try:
            return model.model_validate(value)
        except ValidationError:
            log.warning("ignoring the OAuth token file %s: its %s is not valid", self.path, name)
            return None

    async def get_tokens(self) -> OAuthToken | None:
        token: OAuthToken | None = self._part("tokens", OAuthToken)
        return token

    async def set_tokens(self, tokens: OAuthToken) -> None:
        doc = self._read()
        doc["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        doc["expires_at"] = time.time() + tokens.expires_in if tokens.expires_in else None
        self._write(doc)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        info: OAuthClientInformationFull | None = self._part("client", OAuthClientInformationFull)
        return info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        doc = self._read()
        doc["client"] = client_info.model_dump(mode="json", exclude_none=True)
        self._write(doc)

    def expires_at(self) -> float | None:
        """When the kept access token ends (None: it did not say, or there is none)."""
        value = self._read().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def bearer(self) -> str | None:
        """The kept access token, if there is one that has not expired."""
        doc = self._read()
        tokens = doc.get("tokens")
        token = tokens.get("access_token") if isinstance(tokens, dict) else None
        end = doc.get("expires_at")
        if not isinstance(token, str) or not token:
            return None
        if isinstance(end, int | float) and time.time() > end - EXPIRY_MARGIN_S:
            return None
        return token
