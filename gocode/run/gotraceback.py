"""A Go panic's traceback as the model should read it: like a compile error, at ``model.go:L``.

Applied after the generated program's frames are gone (:func:`trim_traceback`):
only frames in ``model.go`` stay (the model's own code and helpers: never the runtime,
the standard library's internals or gocode's paths), without the program counters and
offsets; the model's entry point is called ``Run``, as it wrote it; and the goroutine that
panicked is named (the model's ``Run``, or the goroutine started at ``model.go:L``).
"""

from __future__ import annotations

import re

_OFFSET = re.compile(r" \+0x[0-9a-f]+$")
_HEADER = re.compile(r"^goroutine (\d+)(?: gp=\S+ m=\S+(?: mp=\S+)?)? \[(.*)\]:$")
_ENTRY = "gocodeModelRun"  # what the generated program renames the model's Run to


def tidy(text: str) -> str:
    """The traceback of a panic or fatal error in ``text`` tidied (pure); other text unchanged."""
    if not re.search(r"^(panic: |fatal error: )", text, re.M) or "\ngoroutine " not in text:
        return text
    lines = text.replace(_ENTRY, "Run").split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("[signal ") and line.endswith("]"):
            i += 1  # addresses and program counters: nothing the model can act on
            continue
        if i + 1 < len(lines) and lines[i + 1].startswith("\t") and not line.startswith("\t"):
            where = lines[i + 1].strip()
            if where.startswith("model.go:"):
                out += [line, "\t" + _OFFSET.sub("", where)]
            i += 2
            continue
        out.append(line)
        i += 1
    return "\n".join(_name_goroutines(out))


def _name_goroutines(lines: list[str]) -> list[str]:
    """``goroutine 7 [running]:`` becomes ``goroutine 7 (started at model.go:8 in Run) [running]:``;
    the first goroutine of a panic is the one that panicked."""
    out = list(lines)
    first = True
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if not m:
            continue
        origin = ""
        for j in range(i + 1, len(lines)):
            if _HEADER.match(lines[j]) or not lines[j].strip():
                break
            created = re.match(r"^created by main\.(\S+) in goroutine \d+$", lines[j])
            if created and j + 1 < len(lines):
                origin = f"started at {lines[j + 1].strip()} in {created[1]}"
                break
        name = origin or "Run's own"
        label = f"goroutine {m[1]} ({name}{', the one that panicked' if first else ''}) [{m[2]}]:"
        out[i] = label
        first = False
    return out


# A frame of the generated program or its runtime in a Go traceback: the function line, then the
# file line under it. The model's own frames (model.go) say where it went wrong; these only cost
# tokens and name files the model never wrote.
_WORKSPACE_PATH = re.compile(r"/ws-[0-9a-f]{8,}/")


def _internal_frame(func: str, where: str) -> bool:
    path = where.strip().split(" ", 1)[0]
    func = func.removeprefix("created by ")
    return func.startswith("gocodews/") or path.startswith("gocode_") or bool(_WORKSPACE_PATH.search(path))


def trim_traceback(text: str) -> str:
    """A panic's traceback without the frames of gocode's generated code (pure)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        frame = i + 1 < len(lines) and lines[i + 1].startswith("\t") and not lines[i].startswith("\t")
        if frame and _internal_frame(lines[i], lines[i + 1]):
            i += 2
            continue
        out.append(lines[i])
        i += 1
    return tidy("\n".join(out))
