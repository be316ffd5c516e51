"""Go's checksum database, read as the ``go`` command reads it: a looked-up record is trusted only
when the tree head it comes with is signed by the database's key and the record is proven to be
in that tree.

- The signed note (golang.org/x/mod/sumdb/note): text, a blank line, then lines
  ``"— <name> <base64(key hash[4] + Ed25519 signature)>"``; the key is written
  ``<name>+<hash hex>+<base64(0x01 + public key)>`` and its hash is the first four bytes of
  SHA-256(name + "\\n" + 0x01 + public key).
- The tree (golang.org/x/mod/sumdb/tlog): RFC 6962 hashes (leaf ``SHA-256(0x00 + record)``,
  node ``SHA-256(0x01 + left + right)``), read from tiles of height 8 at
  ``tile/8/<level>/<index>[.p/<width>]``.

What is not done: the latest tree seen is not kept between runs, so a database that shows
different clients different trees (a fork) is not detected as ``go`` detects it.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from gocode.errors import SumdbError

# Go's own default (cmd/go/internal/modfetch/sumdb.go): the key of sum.golang.org.
SUM_GOLANG_ORG = "sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ux18htTTAD8OuAn8"
TILE_HEIGHT = 8
HASH_SIZE = 32
ALG_ED25519 = 1

Fetch = Callable[[str], bytes]  # a path under the database's URL -> the body


@dataclass(frozen=True)
class Verifier:
    name: str
    key_hash: bytes
    key: Ed25519PublicKey

    @classmethod
    def parse(cls, vkey: str) -> Verifier:
        parts = vkey.split("+", 2)  # the key's base64 may itself hold "+"
        if len(parts) != 3 or not parts[0] or not re.fullmatch(r"[0-9a-f]{8}", parts[1]):
            raise SumdbError(f"malformed checksum database key {vkey!r}")
        name, hash_hex, key_b64 = parts
        try:
            raw = base64.b64decode(key_b64, validate=True)
        except ValueError:
            raise SumdbError(f"malformed checksum database key {vkey!r}") from None
        if len(raw) != 33 or raw[0] != ALG_ED25519:
            raise SumdbError(f"checksum database key {vkey!r} is not an Ed25519 key")
        key_hash = hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4]
        if key_hash.hex() != hash_hex:
            raise SumdbError(f"checksum database key {vkey!r}: its hash does not match the key")
        return cls(name, key_hash, Ed25519PublicKey.from_public_bytes(raw[1:]))


def open_note(msg: bytes, verifier: Verifier) -> str:
    """The text of a signed note, if one of its signatures is ``verifier``'s and is valid."""
    split = msg.rfind(b"\n\n")
    if split < 0 or not msg.endswith(b"\n"):
        raise SumdbError("the tree head is not a signed note")
    text, sigs = msg[: split + 1], msg[split + 2 :]
    prefix = f"— {verifier.name} ".encode()
    for line in sigs.splitlines():
        if not line.startswith(prefix):
            continue
        try:
            sig = base64.b64decode(line[len(prefix) :], validate=True)
        except ValueError:
            continue
        if len(sig) < 5 or sig[:4] != verifier.key_hash:
            continue
        try:
            verifier.key.verify(sig[4:], text)
        except InvalidSignature:
            raise SumdbError(f"the tree head's signature by {verifier.name} is invalid") from None
        return text.decode()
    raise SumdbError(f"the tree head is not signed by {verifier.name}")


@dataclass(frozen=True)
class Tree:
    size: int
    root: bytes


def parse_tree(text: str) -> Tree:
    lines = text.split("\n")
    if len(lines) < 4 or lines[0] != "go.sum database tree" or not lines[1].isdigit():
        raise SumdbError("the tree head is malformed")
    root = base64.b64decode(lines[2])
    if len(root) != HASH_SIZE:
        raise SumdbError("the tree head's hash is malformed")
    return Tree(int(lines[1]), root)


def record_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def tile_path(level: int, index: int, width: int) -> str:
    n = f"{index % 1000:03d}"
    while index >= 1000:
        index //= 1000
        n = f"x{index % 1000:03d}/{n}"
    partial = f".p/{width}" if width != 1 << TILE_HEIGHT else ""
    return f"tile/{TILE_HEIGHT}/{level}/{n}{partial}"


class Tiles:
    """The tree's stored hashes, read tile by tile (each tile fetched once)."""

    def __init__(self, tree: Tree, fetch: Fetch) -> None:
        self.tree = tree
        self.fetch = fetch
        self._tiles: dict[tuple[int, int, int], bytes] = {}

    def subtree(self, level: int, index: int) -> bytes:
        """The hash of the complete subtree of ``2**level`` records starting at ``index * 2**level``."""
        tile_level, k = divmod(level, TILE_HEIGHT)
        first = index << k  # the first hash at the tile level's bottom row
        tile = first >> TILE_HEIGHT
        have = self.tree.size >> (tile_level * TILE_HEIGHT)  # complete hashes on that row
        width = min(1 << TILE_HEIGHT, have - (tile << TILE_HEIGHT))
        if (first + (1 << k)) > have or width <= 0:
            raise SumdbError("the proof needs a hash the tree does not have")
        key = (tile_level, tile, width)
        if key not in self._tiles:
            data = self.fetch(tile_path(tile_level, tile, width))
            if len(data) != width * HASH_SIZE:
                raise SumdbError(f"tile {tile_path(tile_level, tile, width)} has {len(data)} bytes")
            self._tiles[key] = data
        data = self._tiles[key]
        start = first - (tile << TILE_HEIGHT)
        row = [data[i * HASH_SIZE : (i + 1) * HASH_SIZE] for i in range(start, start + (1 << k))]
        while len(row) > 1:
            row = [node_hash(row[i], row[i + 1]) for i in range(0, len(row), 2)]
        return row[0]


def tree_hash(tiles: Tiles, lo: int, hi: int, leaf: int, leaf_hash: bytes) -> bytes:
    """The RFC 6962 hash of records ``[lo, hi)``, with record ``leaf`` hashed from its own data."""
    size = hi - lo
    if size == 1 and lo == leaf:
        return leaf_hash
    if size & (size - 1) == 0 and not lo <= leaf < hi:
        level = size.bit_length() - 1
        return tiles.subtree(level, lo >> level)
    split = 1 << ((size - 1).bit_length() - 1)  # the largest power of two below size
    return node_hash(
        tree_hash(tiles, lo, lo + split, leaf, leaf_hash), tree_hash(tiles, lo + split, hi, leaf, leaf_hash)
    )


def lookup(module: str, version: str, fetch: Fetch, vkey: str = SUM_GOLANG_ORG) -> list[str]:
    """The go.sum lines the database holds for ``module@version``, proven to be in its signed tree."""
    verifier = Verifier.parse(vkey)
    body = fetch(f"lookup/{module}@{version}")
    first, sep, rest = body.partition(b"\n")
    data_end = rest.find(b"\n\n")
    if not sep or not first.isdigit() or data_end < 0:
        raise SumdbError(f"the lookup of {module}@{version} is malformed")
    record_id = int(first)
    data, note = rest[: data_end + 1], rest[data_end + 2 :]
    tree = parse_tree(open_note(note, verifier))
    if record_id >= tree.size:
        raise SumdbError(f"record {record_id} is outside the signed tree of {tree.size}")
    if tree_hash(Tiles(tree, fetch), 0, tree.size, record_id, record_hash(data)) != tree.root:
        raise SumdbError(f"the record of {module}@{version} is not in the signed tree")
    lines = data.decode().splitlines()
    prefix = f"{module} {version}"
    if not lines or any(not line.startswith(prefix) for line in lines):
        raise SumdbError(f"the record does not describe {module}@{version}")
    return lines


def zip_hash(lines: list[str], module: str, version: str) -> str:
    """The ``h1:`` of the module zip among a record's lines."""
    for line in lines:
        fields = line.split(" ")
        if len(fields) == 3 and fields[:2] == [module, version] and fields[2].startswith("h1:"):
            return fields[2]
    raise SumdbError(f"the record of {module}@{version} holds no zip hash")
