"""The corpus of model-written programs (tests/corpus/programs/*.go) and what each must do.

Each file starts with header comments, then the code exactly as a model would send it:

    // expect: ok | compile | runtime
    // output: a line stdout must have (all output lines, in order, are the whole stdout)
    // output-re: a regex stdout must match (re.search)
    // stderr-re: a regex stderr must match
    // error: a regex the error text (stderr or compiler messages) must match (re.search, multiline)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parent / "corpus" / "programs"
_HEADER = re.compile(r"^// (expect|output|output-re|stderr-re|error):(?: (.*))?$")


@dataclass
class Program:
    name: str
    code: str
    expect: str = "ok"
    output: list[str] = field(default_factory=list)
    output_re: list[str] = field(default_factory=list)
    stderr_re: list[str] = field(default_factory=list)
    error_re: list[str] = field(default_factory=list)

    def problems(self, ok: bool, phase: str, stdout: str, stderr: str) -> list[str]:
        """What differs from the expectation (empty when the program behaved)."""
        got = "ok" if ok else phase
        out = []
        if got != self.expect:
            out.append(f"expected {self.expect}, got {got}")
        if self.output and stdout != "".join(line + "\n" for line in self.output):
            out.append(f"stdout {stdout!r} != {self.output!r}")
        out += [f"stdout does not match {r!r}" for r in self.output_re if not re.search(r, stdout, re.M)]
        out += [f"stderr does not match {r!r}" for r in self.stderr_re if not re.search(r, stderr, re.M)]
        out += [f"error does not match {r!r}" for r in self.error_re if not re.search(r, stderr, re.M)]
        return out


def load(path: Path) -> Program:
    lines = path.read_text(encoding="utf-8").split("\n")
    prog = Program(path.stem, "")
    n = 0
    while n < len(lines) and (m := _HEADER.match(lines[n])):
        key, value = m.group(1), m.group(2) or ""
        if key == "expect":
            prog.expect = value
        else:
            {"output": prog.output, "output-re": prog.output_re, "stderr-re": prog.stderr_re, "error": prog.error_re}[
                key
            ].append(value)
        n += 1
    prog.code = "\n".join(lines[n:])
    return prog


def programs() -> list[Program]:
    return [load(p) for p in sorted(PROGRAMS.glob("*.go"))]
