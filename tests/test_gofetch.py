"""Go for a machine without Go: the toolchain zip's hash, the checksum database's proof, the unpacking.

The database answers in ``tests/sumdb/`` were recorded from proxy.golang.org's copy of
sum.golang.org (the lookup of the go1.26.8 linux-amd64 toolchain and the tiles its proof
reads), so the signature and the inclusion proof are checked offline against the real key.
The fetches end to end use a local proxy and database (``file://``, a key made here), with a
small stand-in toolchain whose ``bin/go`` is a shell script.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import os
import stat
import threading
import zipfile
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from gocode.compile import gofetch, sumdb
from gocode.compile.dirhash import hash_zip
from gocode.compile.goenv import proxies
from gocode.compile.goenv import sumdb as sumdb_for
from gocode.errors import ToolchainError

RECORDED = Path(__file__).parent / "sumdb"
MODULE = "golang.org/toolchain"
RECORDED_VERSION = "v0.0.1-go1.26.8.linux-amd64"
RECORDED_H1 = "h1:ZOmGe1OnfREDMIdb1Qi4G9JSuDPBLGExZMQ4nis1RXM="


def recorded(path: str) -> bytes:
    return (RECORDED / path).read_bytes()


@pytest.mark.fast
def test_the_recorded_lookup_is_signed_and_proven():
    lines = sumdb.lookup(MODULE, RECORDED_VERSION, recorded)
    assert sumdb.zip_hash(lines, MODULE, RECORDED_VERSION) == RECORDED_H1


def altered(path: str, old: bytes, new: bytes):
    def fetch(p: str) -> bytes:
        data = recorded(p)
        if p == path:
            assert old in data
            data = data.replace(old, new, 1)
        return data

    return fetch


@pytest.mark.fast
@pytest.mark.parametrize(
    ("fetch", "message"),
    [
        # Another hash in the record: the tree's root no longer matches the signed one.
        (altered(f"lookup/{MODULE}@{RECORDED_VERSION}", b"h1:ZOmG", b"h1:AOmG"), "is not in the signed tree"),
        # The signed tree head changed: the signature fails.
        (
            altered(f"lookup/{MODULE}@{RECORDED_VERSION}", b"go.sum database tree\n6", b"go.sum database tree\n7"),
            "invalid",
        ),
        # A hash inside a tile changed: the proof fails.
        (altered("tile/8/1/942", recorded("tile/8/1/942")[:32], b"\0" * 32), "is not in the signed tree"),
    ],
)
def test_a_tampered_database_answer_is_refused(fetch, message):
    with pytest.raises(sumdb.SumdbError, match=message):
        sumdb.lookup(MODULE, RECORDED_VERSION, fetch)


@pytest.mark.fast
def test_a_note_signed_by_another_key_is_refused():
    other = "sum.golang.org+00000000+" + base64.b64encode(b"\x01" + b"\x02" * 32).decode()
    with pytest.raises(sumdb.SumdbError, match="hash does not match"):
        sumdb.lookup(MODULE, RECORDED_VERSION, recorded, other)
    key = Ed25519PrivateKey.generate().public_key().public_bytes_raw()
    with pytest.raises(sumdb.SumdbError, match=r"not signed by sum\.golang\.org"):
        sumdb.lookup(MODULE, RECORDED_VERSION, recorded, vkey("sum.golang.org", key))


def vkey(name: str, public: bytes) -> str:
    raw = b"\x01" + public
    key_hash = hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4].hex()
    return f"{name}+{key_hash}+{base64.b64encode(raw).decode()}"


class LocalGo:
    """A module proxy and a checksum database on disk (``file://``), serving a stand-in toolchain."""

    def __init__(self, root: Path, files: dict[str, bytes] | None = None) -> None:
        self.version = gofetch.module_version("9.9.9")
        self.prefix = f"{MODULE}@{self.version}/"
        self.proxy = root / "proxy"
        self.db = root / "sumdb"
        self.zip = self.proxy / MODULE / "@v" / f"{self.version}.zip"
        self.zip.parent.mkdir(parents=True)
        files = files or {"bin/go": b"#!/bin/sh\necho go9.9.9\n", "src/fmt/print.go": b"package fmt\n"}
        with zipfile.ZipFile(self.zip, "w") as zf:
            for name, data in files.items():
                zf.writestr(self.prefix + name, data)
        self.key = Ed25519PrivateKey.generate()
        self.publish(hash_zip(self.zip))

    def publish(self, h1: str) -> None:
        """A one-record tree holding ``h1`` for the zip, signed with this database's key."""
        record = f"{MODULE} {self.version} {h1}\n{MODULE} {self.version}/go.mod h1:x\n".encode()
        root = base64.b64encode(sumdb.record_hash(record)).decode()
        text = f"go.sum database tree\n1\n{root}\n".encode()
        public = self.key.public_key().public_bytes_raw()
        verifier = sumdb.Verifier.parse(vkey("test.db", public))
        sig = base64.b64encode(verifier.key_hash + self.key.sign(text)).decode()
        lookup = self.db / "lookup" / f"{MODULE}@{self.version}"
        lookup.parent.mkdir(parents=True, exist_ok=True)
        lookup.write_bytes(b"0\n" + record + b"\n" + text + f"\n— test.db {sig}\n".encode())

    def env(self) -> dict[str, str]:
        public = self.key.public_key().public_bytes_raw()
        return {"GOPROXY": f"file://{self.proxy}", "GOSUMDB": f"{vkey('test.db', public)} file://{self.db}"}


@pytest.fixture
def local_go(tmp_path, monkeypatch):
    def make(files: dict[str, bytes] | None = None) -> LocalGo:
        local = LocalGo(tmp_path / "net", files)
        for name in ("GONOSUMDB", "GOPRIVATE", "GONOSUMCHECK", "GOFLAGS"):
            monkeypatch.delenv(name, raising=False)
        for name, value in local.env().items():
            monkeypatch.setenv(name, value)
        return local

    return make


def test_a_verified_toolchain_is_unpacked_and_used(tmp_path, local_go):
    local_go()
    said: list[str] = []
    go = gofetch.fetched_go(tmp_path / "cache", said.append, "9.9.9")
    assert go == tmp_path / "cache" / "toolchains" / f"go9.9.9.{gofetch.platform_name()}" / "bin" / "go"
    assert stat.S_IMODE(go.stat().st_mode) == 0o755
    assert stat.S_IMODE((go.parent.parent / "src" / "fmt" / "print.go").stat().st_mode) == 0o644
    assert any("downloading Go 9.9.9" in m for m in said) and any("MB downloaded" in m for m in said)
    assert sorted(os.listdir(go.parent.parent.parent)) == [".lock", go.parent.parent.name]  # no download left behind
    said.clear()
    assert gofetch.fetched_go(tmp_path / "cache", said.append, "9.9.9") == go and not said  # reused


def test_a_tampered_toolchain_zip_is_refused(tmp_path, local_go):
    local = local_go()
    local.publish("h1:" + base64.b64encode(b"\0" * 32).decode())  # the database vouches for another zip
    with pytest.raises(ToolchainError, match=f"checksum mismatch for {MODULE}@{local.version}"):
        gofetch.fetched_go(tmp_path / "cache", lambda _m: None, "9.9.9")
    assert os.listdir(tmp_path / "cache" / "toolchains") == [".lock"]  # nothing unpacked, nothing left


def test_without_the_database_the_zip_is_used_with_a_warning(tmp_path, local_go, monkeypatch):
    local = local_go()
    local.publish("h1:" + base64.b64encode(b"\0" * 32).decode())
    monkeypatch.setenv("GONOSUMDB", "golang.org/toolchain")
    said: list[str] = []
    gofetch.fetched_go(tmp_path / "cache", said.append, "9.9.9")
    assert any("checksum database is off" in m and "not verified" in m for m in said)


@pytest.mark.fast
@pytest.mark.parametrize(
    ("name", "kind", "message"),
    [
        ("../../evil", stat.S_IFREG, "climbs out"),
        ("bin/../../../evil", stat.S_IFREG, "climbs out"),
        ("/etc/passwd", stat.S_IFREG, "outside"),  # not under the prefix at all
        ("bin//go2", stat.S_IFREG, "climbs out"),
        ("bin/link", stat.S_IFLNK, "not a plain file"),
        ("dev", stat.S_IFCHR, "not a plain file"),
        ("bin\\..\\..\\evil", stat.S_IFREG, "outside"),
        ("BIN/GO", stat.S_IFREG, "twice"),  # two names for one file on a case-insensitive disk
    ],
)
def test_unsafe_zip_entries_are_refused_before_anything_is_written(tmp_path, name, kind, message):
    prefix = f"{MODULE}@v0.0.1-go9.9.9.linux-amd64/"
    zpath = tmp_path / "t.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr(prefix + "bin/go", b"go")
        info = zipfile.ZipInfo(name if name.startswith("/") else prefix + name)
        info.external_attr = (kind | 0o777) << 16
        zf.writestr(info, b"/etc/passwd")
    dest = tmp_path / "goroot"
    with pytest.raises(ToolchainError, match=message):
        gofetch.unpack(zpath, prefix, dest)
    assert not dest.exists() and sorted(os.listdir(tmp_path)) == ["t.zip"]


@pytest.mark.fast
def test_goproxy_and_gosumdb_are_read_as_go_reads_them():
    assert [p.url for p in proxies({})] == ["https://proxy.golang.org"]
    assert [(p.url, p.any_error) for p in proxies({"GOPROXY": "https://a/|https://b,direct"})] == [
        ("https://a", True),
        ("https://b", False),
    ]
    assert [p.url for p in proxies({"GOPROXY": "https://a,off,https://b"})] == ["https://a"]
    with pytest.raises(ToolchainError, match="GOPROXY=off forbids downloading"):
        proxies({"GOPROXY": "off"})
    with pytest.raises(ToolchainError, match="`direct` cannot fetch one"):
        proxies({"GOPROXY": "direct"})
    assert sumdb_for(MODULE, {}).key == sumdb.SUM_GOLANG_ORG
    for off in ({"GOSUMDB": "off"}, {"GONOSUMDB": "golang.org"}, {"GOPRIVATE": "*.corp,golang.org/toolchain"}):
        assert sumdb_for(MODULE, off) is None, off
    assert sumdb_for(MODULE, {"GONOSUMDB": "golang.org/x"}) is not None
    assert sumdb_for(MODULE, {"GOFLAGS": "-mod=mod -insecure"}) is None
    with pytest.raises(ToolchainError, match="not a checksum database gocode knows"):
        sumdb_for(MODULE, {"GOSUMDB": "sum.example.com"})


def test_no_proxy_reachable_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("GOPROXY", "http://127.0.0.1:9")  # discard: nothing listens
    with pytest.raises(ToolchainError, match=r"cannot download a Go toolchain from http://127\.0\.0\.1:9/.*no network"):
        gofetch.fetched_go(tmp_path / "cache", lambda _m: None, "9.9.9")


@pytest.mark.fast
def test_a_machine_go_publishes_nothing_for_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(gofetch.platform, "system", lambda: "Plan9")
    monkeypatch.setattr(gofetch.platform, "machine", lambda: "mips")
    with pytest.raises(ToolchainError, match=r"no official Go toolchain for this machine \(Plan9 mips\).*GOCODE_GO"):
        gofetch.platform_name()


def test_a_version_no_proxy_has_is_a_clear_error(tmp_path, local_go):
    local = local_go()
    local.zip.unlink()  # the proxy answers "not found" for it
    with pytest.raises(ToolchainError, match=rf"no module proxy has {MODULE}@{local.version} \(tried file://"):
        gofetch.fetched_go(tmp_path / "cache", lambda _m: None, "9.9.9")


class Oversized(http.server.BaseHTTPRequestHandler):
    """A proxy that sends more than a module may be, saying so (Content-Length) or not."""

    def do_GET(self) -> None:
        self.send_response(200)
        if self.path.endswith("/said"):
            self.send_header("Content-Length", "5000")
        self.end_headers()
        self.wfile.write(b"x" * 5000)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.mark.parametrize(("path", "message"), [("/said", "is 5000 bytes"), ("/unsaid", "is more than 1000 bytes")])
def test_a_download_larger_than_a_module_may_be_is_cut_off(tmp_path, monkeypatch, path, message):
    monkeypatch.setattr(gofetch, "MAX_ZIP_BYTES", 1000)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Oversized)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}{path}"
        with pytest.raises(ToolchainError, match=message):
            gofetch.download(url, tmp_path / "z", lambda _m: None, "Go")
        assert not (tmp_path / "z").exists() or (tmp_path / "z").stat().st_size <= 1000
    finally:
        server.shutdown()
        server.server_close()


def test_a_broken_toolchain_in_the_cache_is_replaced_and_an_unusable_cache_is_said(tmp_path, local_go):
    local_go()
    broken = tmp_path / "cache" / "toolchains" / f"go9.9.9.{gofetch.platform_name()}"
    (broken / "stale").mkdir(parents=True)  # bin/go removed by hand
    go = gofetch.fetched_go(tmp_path / "cache", lambda _m: None, "9.9.9")
    assert go.is_file() and (broken / "src" / "fmt" / "print.go").is_file() and not (broken / "stale").exists()
    unusable = tmp_path / "other"
    unusable.mkdir()
    (unusable / "toolchains").write_text("a file where the directory goes")  # fails for root too
    with pytest.raises(ToolchainError, match=r"fetching Go 9\.9\.9 into .*other/toolchains failed: "):
        gofetch.fetched_go(unusable, lambda _m: None, "9.9.9")
