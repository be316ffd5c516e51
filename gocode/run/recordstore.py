"""Recorded runs on disk: one JSON file per run id, with housekeeping caps.

A pooled run's calls (:mod:`gocode.run.interceptor`) are kept with the program and the tool set
it was built against, so ``gocode exec --replay RUN_ID`` can build the same program and answer
every call from the record without any server. Files live in ``$GOCODE_STATE_DIR/recordings``
(else the cache directory's ``recordings``); only the newest ``GOCODE_RECORDINGS_MAX`` (default
500) younger than ``GOCODE_RECORDINGS_MAX_AGE`` days (default 14), together at most
``GOCODE_RECORDINGS_MAX_MB`` (default 256), are kept; one recording's calls, arguments included,
at most ``GOCODE_RECORDING_MAX_MB`` (default 16). A recording holds what tools were sent and
answered: files are ``0600`` in a ``0700`` directory. Writes are atomic (a temporary file renamed
into place), so a reader never sees half a recording.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gocode.errors import RecordingError
from gocode.paths import cache_dir, state_dir
from gocode.run.interceptor import Entry, Interceptor
from gocode.run.runner import RunResult
from gocode.toolset import ServerTools, ToolInfo, ToolSet

RUN_ID = re.compile(r"^r[0-9a-f]{16}$")
DEFAULT_MAX = 500
DEFAULT_MAX_AGE_DAYS = 14.0
DEFAULT_MAX_MB = 256  # all kept recordings together
DEFAULT_RECORDING_MAX_MB = 16  # one recording's calls


def new_run_id() -> str:
    return "r" + secrets.token_hex(8)


def root() -> Path:
    return (state_dir() or cache_dir()) / "recordings"


def _env_number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value >= 0 else default


def recording_cap() -> int:
    """Bytes one recording's calls may take (``GOCODE_RECORDING_MAX_MB``), for the interceptor."""
    return int(_env_number("GOCODE_RECORDING_MAX_MB", DEFAULT_RECORDING_MAX_MB) * (1 << 20))


def toolset_json(toolset: ToolSet) -> list[dict[str, Any]]:
    return [
        {"server": s.server, "protocolVersion": s.protocol_version, "tools": [t.as_json() for t in s.tools]}
        for s in sorted(toolset.servers, key=lambda s: s.server)
    ]


def toolset_from_json(doc: Any) -> ToolSet:
    servers = []
    for s in doc if isinstance(doc, list) else []:
        tools = tuple(
            ToolInfo(
                s["server"],
                t["name"],
                t.get("description", ""),
                t.get("inputSchema") or {},
                t.get("outputSchema"),
                # Everything ToolInfo.as_json writes, or the digest check refuses the file.
                title=t.get("title") if isinstance(t.get("title"), str) else None,
                output_inferred=t.get("outputSchemaInferred") is True,
            )
            for t in s.get("tools", [])
        )
        servers.append(
            ServerTools(s["server"], tools, s.get("protocolVersion") or ServerTools("", ()).protocol_version)
        )
    return ToolSet(tuple(servers))


def differences(recorded: ToolSet, current: ToolSet) -> list[str]:
    """What changed between the tools a run was recorded against and the current ones (empty: same)."""
    old = {(t.server, t.name): t for t in recorded.tools()}
    new = {(t.server, t.name): t for t in current.tools()}
    out = [f"{s}.{n} is gone" for s, n in sorted(old.keys() - new.keys())]
    out += [f"{s}.{n} is new" for s, n in sorted(new.keys() - old.keys())]
    for key in sorted(old.keys() & new.keys()):
        a, b = old[key], new[key]
        inferred = a.output_inferred or b.output_inferred  # typed by its results (gocode.mcp.shapes)
        for what, x, y in (
            ("input schema", a.input_schema, b.input_schema),
            (
                "result type inferred from its results" if inferred else "output schema",
                (a.output_schema, a.output_inferred),
                (b.output_schema, b.output_inferred),
            ),
            ("description", a.description, b.description),
        ):
            if x != y:
                out.append(f"{key[0]}.{key[1]}: its {what} changed")
    return out


@dataclass
class Recording:
    """One run's program, tool set and calls."""

    run_id: str
    code: str
    toolset: ToolSet
    calls: list[Entry] = field(default_factory=list)
    created: float = field(default_factory=time.time)
    mode: str = "live"
    # Servers that are not in the config (Python functions, …): a replay answers them from the
    # recording whether or not they exist then.
    local: tuple[str, ...] = ()
    not_kept: int = 0  # calls past the recording's cap, not recorded at all (a replay stops at the first)

    def as_json(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "created": self.created,
            "mode": self.mode,
            "code": self.code,
            "toolsetDigest": self.toolset.digest(),
            "toolset": toolset_json(self.toolset),
            "calls": [c.as_json() for c in self.calls],
            "localServers": list(self.local),
            **({"callsNotKept": self.not_kept} if self.not_kept else {}),
        }

    @classmethod
    def from_json(cls, doc: Any) -> Recording:
        if not isinstance(doc, dict) or not isinstance(doc.get("code"), str):
            raise ValueError("not a gocode recording")
        toolset = toolset_from_json(doc.get("toolset"))
        if doc.get("toolsetDigest") and doc["toolsetDigest"] != toolset.digest():
            raise ValueError("its tool set does not match its digest (the file was edited)")
        calls = [Entry.from_json(c) for c in doc.get("calls") or []]
        return cls(
            str(doc.get("runId", "")),
            doc["code"],
            toolset,
            calls,
            float(doc.get("created", 0)),
            doc.get("mode", "live"),
            tuple(str(n) for n in doc.get("localServers") or ()),
            int(doc.get("callsNotKept") or 0),
        )


def save(recording: Recording, directory: Path | None = None) -> Path:
    directory = directory or root()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.fchmod(fd, 0o700)  # private, also when an earlier version made it 0755
    finally:
        os.close(fd)
    path = directory / f"{recording.run_id}.json"
    tmp = path.with_suffix(f".tmp{os.getpid()}-{secrets.token_hex(4)}")
    data = json.dumps(recording.as_json(), separators=(",", ":")).encode()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    prune(directory)
    return path


def load(run_id: str, directory: Path | None = None) -> Recording:
    if not RUN_ID.match(run_id):
        raise RecordingError(f"{run_id!r} is not a run id (they look like r0123456789abcdef; see --json or _meta)")
    path = (directory or root()) / f"{run_id}.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return Recording.from_json(doc)
    except FileNotFoundError:
        raise RecordingError(f"no recording of run {run_id} in {path.parent} (it may have been pruned)") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RecordingError(f"the recording of run {run_id} ({path}) cannot be read: {exc}") from None


def prune(directory: Path, now: float | None = None) -> int:
    """Keep the newest recordings within the caps (``GOCODE_RECORDINGS_MAX``, ``…_MAX_AGE`` days,
    ``…_MAX_MB`` in all)."""
    keep = int(_env_number("GOCODE_RECORDINGS_MAX", DEFAULT_MAX))
    max_age = _env_number("GOCODE_RECORDINGS_MAX_AGE", DEFAULT_MAX_AGE_DAYS) * 86400
    max_bytes = _env_number("GOCODE_RECORDINGS_MAX_MB", DEFAULT_MAX_MB) * (1 << 20)
    now = time.time() if now is None else now
    files = []
    for p in directory.glob("r*.json"):
        try:
            st = p.lstat()
        except OSError:
            continue
        files.append((st.st_mtime, st.st_size, p))
    files.sort(reverse=True)
    removed = held = 0
    for i, (mtime, size, p) in enumerate(files):
        if i >= keep or now - mtime > max_age or (i > 0 and held + size > max_bytes):
            p.unlink(missing_ok=True)
            removed += 1
        else:
            held += size
    return removed


def settle(result: RunResult, ic: Interceptor, not_kept: int = 0) -> RunResult:
    """A replay's result: failed, naming the call, when it diverged or a record did not decode,
    even if the program ignored the error it was given (``not_kept``: calls the recording left
    out past its cap, which a replay cannot answer)."""
    problem = ic.failure or ic.divergence()
    if problem is not None and not_kept:
        problem += f" (the recording left out its last {not_kept} calls, past its cap: GOCODE_RECORDING_MAX_MB)"
    if problem is None:
        return result
    return dataclasses.replace(
        result,
        ok=False,
        phase="runtime" if result.phase == "ok" else result.phase,
        stderr=f"gocode: {problem}\n{result.stderr}".rstrip() + "\n",
    )


def servers_missing(recording: Recording, configured: set[str]) -> list[str]:
    """Servers the recording used that the config no longer has."""
    return sorted(
        s.server
        for s in recording.toolset.servers
        if s.tools and s.server not in configured and s.server not in recording.local
    )
