"""Go for a machine that has none: the official toolchain, fetched as the ``go`` command fetches one
when it switches toolchains — the module ``golang.org/toolchain@v0.0.1-go<version>.<os>-<arch>``
from the module proxy, checked against Go's checksum database, unpacked into the cache::

    toolchains/go<version>.<os>-<arch>/     GOROOT (bin/go, src/, pkg/tool/…), renamed into place whole
    toolchains/.lock                         held while one process downloads; the others wait, then reuse

The zip's ``h1:`` hash must be the one the database's signed tree proves (:mod:`gocode.compile.sumdb`),
unless the environment turns the check off as it would for ``go`` (:mod:`gocode.compile.goenv`).
Entries are unpacked only under the toolchain's own directory: a name that is absolute, climbs out
with ``..``, repeats another, or is a link or a device, and a zip larger than Go allows a module,
are refused before anything is written.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import platform
import shutil
import stat
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from gocode.compile import goenv, sumdb
from gocode.compile.dirhash import hash_zip
from gocode.errors import ToolchainError

# The Go gocode is tested with, fetched when the machine has no Go 1.25 or newer.
GO_VERSION = "1.26.8"
MODULE = "golang.org/toolchain"
TOOLCHAINS_DIR = "toolchains"
MAX_ZIP_BYTES = 500 << 20  # Go's own limit on a module zip, packed and unpacked
MAX_ANSWER_BYTES = 1 << 20  # a checksum database answer (a lookup, a tile)
TIMEOUT = 60.0  # seconds without a byte before a request is given up
PROGRESS_EVERY = 2.0  # seconds between download progress lines

# Python's names for the machine -> Go's (GOOS, GOARCH) as the toolchain module spells them.
GOOS = {"Linux": "linux", "Darwin": "darwin", "Windows": "windows", "FreeBSD": "freebsd", "OpenBSD": "openbsd"}
GOARCH = {
    "x86_64": "amd64",
    "amd64": "amd64",
    "aarch64": "arm64",
    "arm64": "arm64",
    "i386": "386",
    "i686": "386",
    "armv6l": "armv6l",
    "armv7l": "armv6l",
    "ppc64le": "ppc64le",
    "s390x": "s390x",
    "riscv64": "riscv64",
    "loongarch64": "loong64",
}

Progress = Callable[[str], None]


def platform_name() -> str:
    """``<os>-<arch>`` as the toolchain module names this machine; a :class:`ToolchainError` if Go has none."""
    system, machine = platform.system(), platform.machine()
    goos, goarch = GOOS.get(system), GOARCH.get(machine) or GOARCH.get(machine.lower())
    if not goos or not goarch:
        raise ToolchainError(
            f"no official Go toolchain for this machine ({system} {machine}): "
            "install Go 1.25 or newer yourself and set GOCODE_GO=/path/to/go"
        )
    return f"{goos}-{goarch}"


def module_version(version: str = GO_VERSION, plat: str | None = None) -> str:
    return f"v0.0.1-go{version}.{plat or platform_name()}"


def fetched_go(cache: Path, progress: Progress, version: str = GO_VERSION) -> Path:
    """The ``go`` command of the toolchain fetched into ``cache`` (downloaded, checked and unpacked
    the first time; one process at a time)."""
    plat = platform_name()
    root = cache / TOOLCHAINS_DIR
    goroot = root / f"go{version}.{plat}"
    go = goroot / "bin" / "go"
    if go.is_file():
        return go
    proxies = goenv.proxies()  # an environment that forbids the download says so before anything is made
    try:
        return _fetch(root, goroot, version, plat, proxies, progress)
    except OSError as exc:  # the disk full, the cache not writable: said as what failed
        raise ToolchainError(f"fetching Go {version} into {root} failed: {exc}") from None


def _fetch(root: Path, goroot: Path, version: str, plat: str, proxies: list[goenv.Proxy], progress: Progress) -> Path:
    go = goroot / "bin" / "go"
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / ".lock"):
        if go.is_file():
            return go  # another process fetched it while this one waited
        mod_version = module_version(version, plat)
        with tempfile.TemporaryDirectory(prefix=".fetch-", dir=root) as tmp:
            zpath = Path(tmp) / "toolchain.zip"
            what = f"Go {version} for {plat}"
            path = f"{MODULE}/@v/{mod_version}.zip"
            if not _from_proxies(proxies, lambda p: download(f"{p.url}/{path}", zpath, progress, what)):
                raise ToolchainError(
                    f"no module proxy has {MODULE}@{mod_version} (tried {', '.join(p.url for p in proxies)}): "
                    f"Go {version} is not published for {plat}; install Go 1.25 or newer yourself and set GOCODE_GO"
                )
            progress(f"checking Go {version} against the checksum database …")
            verify(zpath, mod_version, proxies, progress)
            progress(f"unpacking Go {version} into {goroot} …")
            staged = Path(tmp) / "goroot"
            unpack(zpath, f"{MODULE}@{mod_version}/", staged)
            zpath.unlink()
            _check_runs(staged / "bin" / "go", version)
            if goroot.is_symlink() or goroot.is_file():
                goroot.unlink()
            elif goroot.exists():
                shutil.rmtree(goroot)  # one without bin/go (a hand removed it): replaced whole
            os.replace(staged, goroot)  # whole or not at all: a reader never sees half a toolchain
        progress(f"Go {version} ready: {go}")
    return go


def cached_go(cache: Path, version: str = GO_VERSION) -> Path | None:
    """The fetched toolchain's ``go`` when it is in the cache already (None on a machine Go has none for)."""
    with contextlib.suppress(ToolchainError):
        go = cache / TOOLCHAINS_DIR / f"go{version}.{platform_name()}" / "bin" / "go"
        if go.is_file():
            return go
    return None


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _from_proxies(proxies: list[goenv.Proxy], attempt: Callable[[goenv.Proxy], bool]) -> bool:
    """Try each proxy in turn as ``go`` does: on to the next when one has not the file, or after "|" when it failed."""
    for i, proxy in enumerate(proxies):
        try:
            if attempt(proxy):
                return True
        except ToolchainError:
            if not proxy.any_error or i == len(proxies) - 1:
                raise
    return False


def _open(url: str) -> Any:
    """The response for ``url``; None when the server has no such file (404, 410, or no local file)."""
    try:
        return urllib.request.urlopen(url, timeout=TIMEOUT)  # http(s) or file://, from GOPROXY
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            return None
        raise ToolchainError(f"downloading {url} failed: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if url.startswith("file://") and isinstance(reason, FileNotFoundError):
            return None
        raise ToolchainError(
            f"cannot download a Go toolchain from {url}: {reason} (no network? set GOPROXY to a reachable "
            "module proxy, or install Go 1.25 or newer yourself: on PATH, or GOCODE_GO=/path/to/go)"
        ) from None


def download(url: str, dest: Path, progress: Progress, what: str) -> bool:
    """Copy ``url`` to ``dest``, saying how many bytes arrived every few seconds; False when it is not there."""
    resp = _open(url)
    if resp is None:
        return False
    with resp:
        total = int(resp.headers.get("Content-Length") or 0)
        if total > MAX_ZIP_BYTES:
            raise ToolchainError(f"{url} is {total} bytes, more than a module may be")
        size = f" of {total / 1e6:.1f} MB" if total else ""
        progress(f"downloading {what} ({url}){size} …")
        got, last = 0, time.monotonic()
        with open(dest, "wb") as out:
            while chunk := _read(resp, url):
                got += len(chunk)
                if got > MAX_ZIP_BYTES:
                    raise ToolchainError(f"{url} is more than {MAX_ZIP_BYTES} bytes, more than a module may be")
                out.write(chunk)
                if time.monotonic() - last >= PROGRESS_EVERY:
                    last = time.monotonic()
                    pct = f" ({100 * got // total} %)" if total else ""
                    progress(f"  {got / 1e6:.1f}{size} MB{pct}")
        if total and got != total:
            raise ToolchainError(f"downloading {url} stopped at {got} of {total} bytes")
        progress(f"  {got / 1e6:.1f} MB downloaded")
    return True


def _read(resp: Any, url: str) -> bytes:
    try:
        return resp.read(1 << 20)
    except OSError as exc:
        raise ToolchainError(f"downloading {url} failed: {exc}") from None


def _get(url: str) -> bytes:
    resp = _open(url)
    if resp is None:
        raise ToolchainError(f"{url}: not found")
    with resp:
        data = resp.read(MAX_ANSWER_BYTES + 1)
    if len(data) > MAX_ANSWER_BYTES:
        raise ToolchainError(f"{url}: the answer is larger than a checksum database answers")
    return data


def verify(zpath: Path, mod_version: str, proxies: list[goenv.Proxy], progress: Progress) -> None:
    """Refuse the zip unless its ``h1:`` is the one the checksum database proves (or checks are off)."""
    db = goenv.sumdb(MODULE)
    try:
        got = hash_zip(zpath)
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise ToolchainError(f"the downloaded Go toolchain is not a valid module zip: {exc}") from None
    if db is None:
        progress(f"warning: the checksum database is off (GOSUMDB/GONOSUMDB); Go {mod_version} is not verified")
        return
    base = db.url or _sumdb_base(proxies, db.name)
    try:
        want = sumdb.zip_hash(
            sumdb.lookup(MODULE, mod_version, lambda p: _get(f"{base}/{p}"), db.key), MODULE, mod_version
        )
    except sumdb.SumdbError as exc:
        raise ToolchainError(f"verifying the Go toolchain with {db.name} failed: {exc}") from None
    if got != want:
        raise ToolchainError(
            f"checksum mismatch for {MODULE}@{mod_version}: downloaded {got}, {db.name} has {want}; "
            "the download was refused (a proxy or the network changed it)"
        )


def _sumdb_base(proxies: list[goenv.Proxy], name: str) -> str:
    """The database through the first proxy that serves it (``go help module-auth``), else directly."""
    for proxy in proxies:
        base = f"{proxy.url}/sumdb/{name}"
        with contextlib.suppress(ToolchainError):
            _get(f"{base}/supported")
            return base
    return f"https://{name}"


def unpack(zpath: Path, prefix: str, dest: Path) -> None:
    """Write the zip's files named under ``prefix`` into the new directory ``dest``; refuse the whole
    zip, before writing anything, when one entry could land elsewhere or is not a plain file."""
    with zipfile.ZipFile(zpath) as zf:
        entries = _safe_entries(zf, prefix)
        dest.mkdir()
        for info, rel in entries:
            target = dest.joinpath(*rel.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            # Executable where Go puts its programs (the zip's mode bits are not kept, as with `go`).
            mode = 0o755 if rel.parts[0] == "bin" or rel.parts[:2] == ("pkg", "tool") else 0o644
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
            with os.fdopen(fd, "wb") as out, zf.open(info) as src:
                shutil.copyfileobj(src, out, 1 << 20)


def _safe_entries(zf: zipfile.ZipFile, prefix: str) -> list[tuple[zipfile.ZipInfo, PurePosixPath]]:
    entries: list[tuple[zipfile.ZipInfo, PurePosixPath]] = []
    seen: set[str] = set()
    total = 0
    for info in zf.infolist():
        name = info.filename
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise ToolchainError(f"the Go toolchain zip holds {name!r}, which is not a plain file: refused")
        if not name.startswith(prefix) or "\\" in name or "\0" in name:
            raise ToolchainError(f"the Go toolchain zip holds {name!r}, outside {prefix}: refused")
        rest = name[len(prefix) :].removesuffix("/") if info.is_dir() else name[len(prefix) :]
        if info.is_dir() and not rest:
            continue
        if any(part in ("", ".", "..") for part in rest.split("/")):
            raise ToolchainError(f"the Go toolchain zip holds {name!r}, which climbs out of its directory: refused")
        if info.is_dir():
            continue
        rel = PurePosixPath(rest)
        if name.lower() in seen:
            raise ToolchainError(f"the Go toolchain zip holds {name!r} twice: refused")
        seen.add(name.lower())
        total += info.file_size
        if total > MAX_ZIP_BYTES:
            raise ToolchainError(f"the Go toolchain zip unpacks to more than {MAX_ZIP_BYTES} bytes: refused")
        entries.append((info, rel))
    if not entries:
        raise ToolchainError("the Go toolchain zip is empty")
    return entries


def _check_runs(go: Path, version: str) -> None:
    env = {**os.environ, "GOTOOLCHAIN": "local"}
    try:
        out = subprocess.run([str(go), "env", "GOVERSION"], capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolchainError(f"the fetched Go toolchain does not run: {exc}") from None
    if out.stdout.strip() != f"go{version}":
        raise ToolchainError(
            f"the fetched Go toolchain says {out.stdout.strip() or out.stderr.strip()!r}, not go{version}"
        )
