"""Tool listings kept on disk for as long as their server said they may be (``ttlMs``).

A controller that restarts (``gocode serve``, an agent loop's :class:`~gocode.Toolbox`) takes a
server's tools from here instead of listing them again while the entry is fresh, and a server
that is down at start still has its functions (calls to them fail with the reason). Nothing is
kept for a server that sent no ``ttlMs`` or ``ttlMs: 0``; ``tools/list_changed`` drops the entry.

Entries live under ``<gocode cache>/tool-lists/``, one JSON file per server, named by a hash
of the server's whole config — its command, URL, ``env`` and ``headers`` included — so an
answer is only ever reused for the same server reached with the same credentials. That is
also what ``cacheScope: private`` asks (no sharing between users); ``public`` entries are kept
the same way. The directory belongs to this module; writes are atomic (rename), and an entry
that cannot be read is treated as missing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gocode.config import ServerConfig
from gocode.files import replace_file
from gocode.mcp.listing import Listing

FORMAT = 1


@dataclass(frozen=True)
class CachedListing:
    """A listing as it was received, with what the session negotiated, valid until ``expires``."""

    listing: Listing
    protocol_version: str
    server_info: str
    expires: float  # time.time()
    listed: float = 0.0  # time.time(), kept by RecentListings


class ListingCache:
    """Fresh tool listings per server config. Safe to share between tasks and processes."""

    def __init__(self, root: Path | None = None) -> None:
        if root is None:
            from gocode.paths import cache_dir

            root = cache_dir() / "tool-lists"
        self.root = root

    def _key(self, name: str, server: ServerConfig) -> str:
        doc = {
            "name": name,
            "server": server.model_dump(mode="json", by_alias=True, exclude={"learn_shapes", "infer_result_types"}),
        }
        return hashlib.sha256(json.dumps({**doc, "format": FORMAT}, sort_keys=True).encode()).hexdigest()[:32]

    def _path(self, name: str, server: ServerConfig) -> Path:
        return self.root / f"{self._key(name, server)}.json"

    def shapes_path(self, name: str, server: ServerConfig, model: str) -> Path:
        """Where the shapes learned from this server's results by ``model`` (a model ref) are
        kept (see gocode.mcp.shapes): one file per server config and model, as one model's
        results are never shown to another. Unlike a listing, they outlive ``ttlMs`` and
        ``list_changed``. ``$GOCODE_SHAPES_DIR`` moves them (tests keep each one's own)."""
        base = os.environ.get("GOCODE_SHAPES_DIR")
        key = hashlib.sha256(json.dumps([self._key(name, server), model]).encode()).hexdigest()[:32]
        return (Path(base) if base else self.root / "shapes") / f"{key}.json"

    def load(self, name: str, server: ServerConfig, now: float | None = None) -> CachedListing | None:
        """The fresh entry for this server, if there is one."""
        path = self._path(name, server)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            if (now or time.time()) >= float(doc["expires"]):
                path.unlink()  # stale: nobody may use it again
                return None
            listing = Listing(
                tools=list(doc["tools"]),
                warnings=list(doc["warnings"]),
                ttl_ms=doc.get("ttlMs"),
                cache_scope=doc.get("cacheScope"),
                instructions=str(doc.get("instructions") or ""),
                offers=_offers(doc.get("offers")),
            )
            return CachedListing(listing, str(doc["protocolVersion"]), str(doc["serverInfo"]), float(doc["expires"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, name: str, server: ServerConfig, listing: Listing, protocol_version: str, server_info: str) -> None:
        """Keep the listing for as long as its ``ttlMs`` allows (nothing without one)."""
        if not listing.ttl_ms:
            self.drop(name, server)
            return
        doc: dict[str, Any] = {
            "expires": time.time() + listing.ttl_ms / 1000,
            "ttlMs": listing.ttl_ms,
            "cacheScope": listing.cache_scope,
            "protocolVersion": protocol_version,
            "serverInfo": server_info,
            "instructions": listing.instructions,
            "offers": listing.offers,
            "tools": listing.tools,
            "warnings": listing.warnings,
        }
        self._write(self._path(name, server), doc)

    @staticmethod
    def _write(path: Path, doc: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):  # a cache that cannot be written costs a listing, nothing more
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(path, json.dumps(doc).encode())

    def drop(self, name: str, server: ServerConfig) -> None:
        with contextlib.suppress(OSError):
            self._path(name, server).unlink()


DEFAULT_RECENT_AGE_S = 24 * 3600


class RecentListings(ListingCache):
    """The last listing of each server, whatever its ``ttlMs``, for commands that only show
    tools (``gocode list``, ``search``, ``describe``): they answer from here without starting
    servers while an entry is younger than their ``max_age``, and say how old it is. A server
    that sent ``ttlMs: 0`` asked not to be kept, and is not. Under ``<gocode cache>/recent-tool-lists/``
    (``$GOCODE_RECENT_LISTINGS`` puts them elsewhere)."""

    def __init__(self, root: Path | None = None) -> None:
        if root is None:
            from gocode.paths import cache_dir

            env = os.environ.get("GOCODE_RECENT_LISTINGS")
            root = Path(env) if env else cache_dir() / "recent-tool-lists"
        super().__init__(root)

    def load(self, name: str, server: ServerConfig, now: float | None = None) -> CachedListing | None:
        """The last listing of this server (``listed``: when), however old."""
        try:
            doc = json.loads(self._path(name, server).read_text(encoding="utf-8"))
            listing = Listing(tools=list(doc["tools"]), warnings=list(doc["warnings"]), ttl_ms=doc.get("ttlMs"))
            listing.instructions = str(doc.get("instructions") or "")
            listing.offers = _offers(doc.get("offers"))
            version, info = str(doc["protocolVersion"]), str(doc["serverInfo"])
            return CachedListing(listing, version, info, expires=0.0, listed=float(doc["listed"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, name: str, server: ServerConfig, listing: Listing, protocol_version: str, server_info: str) -> None:
        if listing.ttl_ms == 0:
            self.drop(name, server)
            return
        doc: dict[str, Any] = {
            "listed": time.time(),
            "ttlMs": listing.ttl_ms,
            "protocolVersion": protocol_version,
            "serverInfo": server_info,
            "instructions": listing.instructions,
            "offers": listing.offers,
            "tools": listing.tools,
            "warnings": listing.warnings,
        }
        self._write(self._path(name, server), doc)


def _offers(kept: Any) -> list[str] | None:
    """A kept listing's offers: a list of names, else not known."""
    return [str(k) for k in kept] if isinstance(kept, list) else None
