"""What the orchestrator says to the model, and how it reads the replies.

Every request is small on purpose: the deciding one carries the tools' names only, the writing
one the Go rules and the declarations of the tools the search selected, the answering one the
program's output. Reading a reply never executes anything: a code block is only text handed to
``execute_go_code``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

TOOLS_PREFIX = "TOOLS:"
CANNOT_PREFIX = "CANNOT:"

DECIDE = f"""\
You answer a user's request. Tools are available through Go programs; the servers and tool names:
{{names}}
If you can answer fully and correctly without tools, just answer. If the answer needs a tool (live data,
lookups, actions), reply with one line only: {TOOLS_PREFIX} <what the tools must do: a few words per task, tasks separated by ;>"""

WRITE = f"""\
{{rules}}
Write Go for the user's request with the functions declared below. Reply with one ```go block (the
body of Run) that prints what the answer needs and nothing else. If these functions cannot do it,
reply with one line: {CANNOT_PREFIX} <why>"""

ANSWER = """\
A program was run to answer the user's request; answer the request from its output. Be brief and
do not mention the program."""


def write_request(prompt: str, declarations: str) -> str:
    return f"Request: {prompt}\n\nFunctions:\n```go\n{declarations.rstrip()}\n```"


def repair_request(error: str) -> str:
    return f"The program failed:\n{error.rstrip()}\n\nReply with the corrected program in one ```go block."


NO_CODE = (
    f"Your reply had no ```go block. Reply with the whole program in one ```go block, or with {CANNOT_PREFIX} <why>."
)


def answer_request(prompt: str, output: str) -> str:
    return f"Request: {prompt}\n\nProgram output:\n{output.rstrip() or '(nothing)'}"


@dataclass(frozen=True)
class Decision:
    """How the model answered the deciding request: directly, or with a search for tools."""

    kind: Literal["answer", "tools"]
    text: str  # the answer, or what the tools must do (the search query)


def read_decision(reply: str) -> Decision:
    """``TOOLS: …`` on a line of its own (the first such line) means tools; anything else is the answer."""
    for line in reply.splitlines():
        stripped = line.strip().strip("*`").strip()
        if stripped.upper().startswith(TOOLS_PREFIX):
            return Decision("tools", stripped[len(TOOLS_PREFIX) :].strip())
    return Decision("answer", reply.strip())


_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Written:
    """The code of a reply (None when it had no code block) or the model's reason it cannot."""

    code: str | None
    cannot: str | None = None


def read_code(reply: str) -> Written:
    """The first ```go (or ```golang) block of a reply, else its first unlabelled block; a reply
    whose first line is ``CANNOT: …`` declines."""
    first = reply.strip().splitlines()[0].strip() if reply.strip() else ""
    if first.upper().startswith(CANNOT_PREFIX):
        return Written(None, first[len(CANNOT_PREFIX) :].strip() or "no reason given")
    blocks = [(m.group(2).lower(), m.group(3)) for m in _FENCE.finditer(reply)]
    for lang, body in blocks:
        if lang in ("go", "golang") and body.strip():
            return Written(body)
    for lang, body in blocks:
        if not lang and body.strip():
            return Written(body)
    return Written(None)
