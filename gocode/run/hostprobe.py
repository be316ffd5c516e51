"""What this host supports for the sandbox, asked of the kernel from Python, at once.

The launcher's ``-probe`` is the authority (it is the program that confines), but it is a Go
program the first set-up of a machine builds: minutes from an empty Go cache. The tool
description states the sandbox tier, so a server on a cold machine would have to keep its
first client waiting for that build. This asks the kernel the same questions the launcher
does (Landlock's ABI, seccomp filters, an unprivileged user and network namespace) with the
same system calls, and answers in the launcher's JSON shape; once the launcher is built its
own answer is checked against it (:meth:`gocode.codemode.CodeMode.confirm_sandbox`).

Only for the architectures the launcher is built for (amd64, arm64): elsewhere :func:`probe`
returns None and the launcher is asked.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import subprocess
import sys
from typing import Any

# Go's names for the machines the launcher supports, and each one's seccomp system call.
_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
_SYS_SECCOMP = {"amd64": 317, "arm64": 277}
SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on every architecture since Linux 5.13
LANDLOCK_CREATE_RULESET_VERSION = 1
PR_GET_SECCOMP = 21
SECCOMP_GET_ACTION_AVAIL = 2
SECCOMP_RET_KILL_PROCESS = 0x80000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000

# Run in a fresh interpreter (single-threaded, as the launcher's child is): whether an
# unprivileged user and network namespace can be made here; exit status 0, or the errno.
_USERNS_CHILD = (
    "import ctypes,sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    f"sys.exit(0 if libc.unshare({CLONE_NEWUSER | CLONE_NEWNET}) == 0 else (ctypes.get_errno() or 1))\n"
)


def probe(fake_abi: int | None = None) -> dict[str, Any] | None:
    """The launcher's probe document (``landlockAbi``, ``seccomp``, ``userNamespaces``,
    ``userNamespacesError``, ``uid``, ``kernel``, ``arch``), or None where only the launcher can
    tell (not Linux, another architecture, no C library to call through)."""
    arch = _ARCH.get(platform.machine())
    if not sys.platform.startswith("linux") or arch is None:
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        syscall, prctl = libc.syscall, libc.prctl
    except (OSError, AttributeError):
        return None
    syscall.restype = prctl.restype = ctypes.c_long
    abi = syscall(
        ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET),
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint(LANDLOCK_CREATE_RULESET_VERSION),
    )
    seccomp = False
    if prctl(ctypes.c_int(PR_GET_SECCOMP), 0, 0, 0, 0) >= 0:  # the kernel has seccomp at all
        action = ctypes.c_uint32(SECCOMP_RET_KILL_PROCESS)
        got = syscall(
            ctypes.c_long(_SYS_SECCOMP[arch]),
            ctypes.c_uint(SECCOMP_GET_ACTION_AVAIL),
            ctypes.c_uint(0),
            ctypes.byref(action),
        )
        seccomp = got == 0
    userns, userns_error = _user_namespaces()
    return {
        "landlockAbi": fake_abi if fake_abi is not None and fake_abi >= 0 else max(int(abi), 0),
        "seccomp": seccomp,
        "userNamespaces": userns,
        "userNamespacesError": userns_error,
        "uid": os.getuid(),
        "kernel": os.uname().release,
        "arch": arch,
    }


def _user_namespaces() -> tuple[bool, str]:
    """Whether a process may make a user and a network namespace (as the kernel and its
    policies decide, so it is tried), and the error when not."""
    try:
        child = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _USERNS_CHILD],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"the probe could not run: {exc}"
    if child.returncode == 0:
        return True, ""
    if child.returncode > 0 and not child.stderr:
        text = os.strerror(child.returncode)
        return False, text[:1].lower() + text[1:]  # as Go spells an errno ("operation not permitted")
    return False, child.stderr.decode(errors="replace").strip().splitlines()[-1:][0] if child.stderr else "failed"
