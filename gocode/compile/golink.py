"""Compile and link one ``main.go`` by invoking the Go compiler and linker directly.

``go build`` of a one-file program spends a large share of its time in the ``go`` command
itself (loading packages, checking the build cache) before it compiles one file and links.
Like Bazel's rules_go, gocode asks ``go list -export`` once per tool set for the compiled
export data of every package a program may use — the whole standard library, the SDK, the
runtime and the tool set's bindings — writes that as an ``importcfg``, and then builds each
program with two tool invocations: ``compile`` (only the model's file) and ``link``.

This is an accelerator, never the source of truth: anything unexpected (a package outside
the importcfg, a compile error) makes the caller fall back to ``go build``, whose result and
messages are then the answer, so both paths give the same results and the same errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

# Link flags: stripped (no symbol table or DWARF) is smaller and links faster; a program's
# panics still show file:line from the pclntab.
LINK_FLAGS = ("-s", "-w", "-buildmode=exe")


@dataclass(frozen=True)
class DirectConfig:
    """What a direct build needs: the tools, the importcfg, and what ``go build`` would pass."""

    compile: Path
    link: Path
    importcfg: Path
    lang: str  # -lang for the compiler: the main module's go version ("go1.25")
    godebug: str  # the main module's default GODEBUG, embedded by the linker as go build does


async def run(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float = 600) -> tuple[int, str]:
    """Run a tool in its own process group; a cancelled or timed-out build leaves nothing running."""
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=dict(env), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except (asyncio.CancelledError, TimeoutError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        raise
    return proc.returncode or 0, out.decode("utf-8", "replace")


def parse_exports(listing: str) -> tuple[dict[str, str], str]:
    """``go list`` lines ``path<TAB>export<TAB>defaultGODEBUG`` → export files, and the GODEBUG of main."""
    exports: dict[str, str] = {}
    godebug = ""
    for line in listing.splitlines():
        parts = line.split("\t")
        if len(parts) != 3:
            continue
        path, export, debug = parts
        if export:
            exports[path] = export
        if debug:
            godebug = debug
    return exports, godebug


def importcfg_text(exports: Mapping[str, str]) -> str:
    return "".join(f"packagefile {path}={export}\n" for path, export in sorted(exports.items()))


def module_lang(go_mod: str) -> str:
    """The ``-lang`` value for a go.mod's ``go`` directive (``go 1.25.0`` → ``go1.25``)."""
    m = re.search(r"^go\s+(\d+)\.(\d+)", go_mod, re.MULTILINE)
    return f"go{m.group(1)}.{m.group(2)}" if m else ""


async def build(cfg: DirectConfig, run_dir: Path, out: Path, env: Mapping[str, str]) -> tuple[bool, str]:
    """Compile ``run_dir/main.go`` and link it to ``out``; (ok, messages)."""
    compile_argv = [
        str(cfg.compile), "-o", "main.a", "-p", "main", "-complete", "-pack", "-nolocalimports",
        "-trimpath", f"{run_dir}=>", "-importcfg", str(cfg.importcfg),
    ]  # fmt: skip
    if cfg.lang:
        compile_argv += ["-lang", cfg.lang]
    code, text = await run([*compile_argv, "main.go"], cwd=run_dir, env=env)
    if code != 0:
        return False, text
    link_argv = [str(cfg.link), "-o", str(out), "-importcfg", str(cfg.importcfg), *LINK_FLAGS]
    if cfg.godebug:
        link_argv.append(f"-X=runtime.godebugDefault={cfg.godebug}")
    code, text = await run([*link_argv, "main.a"], cwd=run_dir, env=env)
    return code == 0, text
