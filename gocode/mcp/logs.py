"""Request ids and log lines: one JSON object per line on stderr (``--log-format json``), or text.

Every tool call gets a request id (:func:`new_request_id`), kept in a context variable for the
call's task, so every line logged while the call runs carries it; the same id is in the
result's ``_meta`` (``io.gocode/requestId``), which lets an operator find a user's call in
the logs. Each finished call logs one ``call`` line with its tool, phase, outcome and timings;
a call its client cancelled (``notifications/cancelled``, or a client that hung up) logs one too,
with outcome ``cancelled``.
"""

from __future__ import annotations

import contextvars
import json
import logging
import time
from typing import Any

REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("gocode_request_id", default=None)
CALLS_LOGGER = "gocode.calls"

# LogRecord attributes that are not a caller's ``extra``.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "request_id"}


def new_request_id() -> str:
    import secrets  # here: every command sets up logging, and secrets loads random and hmac

    return secrets.token_hex(8)


def current_request_id() -> str | None:
    return REQUEST_ID.get()


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` (or None) to every record, from the running call's context."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = REQUEST_ID.get()
        return True


class FloodFilter(logging.Filter):
    """At most ``burst`` warnings (and worse) of one kind per ``window`` seconds; the rest are
    counted, and the next one let through says how many were not logged.

    A kind is the logger and the message before its arguments: an accept loop out of
    descriptors, or thousands of clients each failing the same way, log one template over and
    over (once, 800 MB in five minutes). Information lines (a call's one line) are never held back.
    """

    def __init__(self, burst: int = 10, window: float = 60.0, kinds: int = 1024) -> None:
        super().__init__()
        self.burst, self.window, self.kinds = burst, window, kinds
        self._seen: dict[tuple[str, str], list[float]] = {}  # kind -> [window start, let through, dropped]

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        key = (record.name, str(record.msg)[:200])
        now = time.monotonic()
        seen = self._seen.get(key)
        if seen is None or now - seen[0] >= self.window:
            if seen is None and len(self._seen) >= self.kinds:
                self._seen.pop(next(iter(self._seen)))  # the oldest kind: the table stays small
            dropped = int(seen[2]) if seen is not None else 0
            self._seen[key] = [now, 1, 0]
            if dropped:
                record.msg = f"{record.getMessage()} (and {dropped} more like it in {self.window:.0f} s, not logged)"
                record.args = None
            return True
        if seen[1] < self.burst:
            seen[1] += 1
            return True
        seen[2] += 1
        return False


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts, level, logger, msg, request_id, and the record's extras."""

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        rid = getattr(record, "request_id", None)
        if rid:
            doc["request_id"] = rid
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                doc[key] = value
        if record.exc_info and record.exc_info[1] is not None:
            doc["error"] = f"{type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        return json.dumps(doc, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``gocode: <logger>: <message>`` with the request id in brackets when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        rid = getattr(record, "request_id", None)
        return f"gocode: {record.name}: {record.getMessage()}" + (f" [{rid}]" if rid else "")


def log_call(tool: str, kind: str, phase: str, outcome: str, duration_ms: float, **fields: Any) -> None:
    """The one line every finished call logs (INFO on ``gocode.calls``)."""
    logging.getLogger(CALLS_LOGGER).info(
        "call %s %s in %.0f ms",
        tool,
        outcome,
        duration_ms,
        extra={"tool": tool, "kind": kind, "phase": phase, "outcome": outcome, "duration_ms": round(duration_ms, 1)}
        | fields,
    )
