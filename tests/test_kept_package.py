"""The Go IR kept on disk per tool set (gocode/schema/kept.py): read back when the tool set and
gocode are the same, built afresh otherwise."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest

from gocode.schema.builder import build_package
from gocode.schema.kept import package_for
from gocode.toolset import ServerTools, ToolInfo, ToolSet

pytestmark = pytest.mark.fast


def toolset(*names: str, server: str = "s") -> ToolSet:
    tools = tuple(
        ToolInfo(server, n, f"Does {n}.", {"type": "object", "properties": {"q": {"type": "string"}}}) for n in names
    )
    return ToolSet((ServerTools(server, tools),))


def only_entry(root: Path) -> Path:
    (entry,) = root.glob("*.pickle")
    return entry


def test_a_kept_package_is_read_back_not_built(tmp_path: Path) -> None:
    ts = toolset("get_thing", "put_thing")
    first = package_for(ts, tmp_path)
    assert first == build_package(ts)
    entry = only_entry(tmp_path)
    # Mark the kept entry: the second answer must be the one read from disk.
    marked = dataclasses.replace(first, warnings=("read from disk",))
    entry.write_bytes(pickle.dumps(marked))
    assert package_for(ts, tmp_path).warnings == ("read from disk",)


def test_another_tool_set_or_order_is_another_entry(tmp_path: Path) -> None:
    package_for(toolset("a_tool", "b_tool"), tmp_path)
    changed = package_for(toolset("a_tool", "c_tool"), tmp_path)
    reordered = package_for(toolset("b_tool", "a_tool"), tmp_path)
    assert len(list(tmp_path.glob("*.pickle"))) == 3
    assert changed == build_package(toolset("a_tool", "c_tool"))
    assert reordered == build_package(toolset("b_tool", "a_tool"))


@pytest.mark.parametrize("content", [b"", b"not a pickle", pickle.dumps({"funcs": []})])
def test_a_torn_or_foreign_entry_is_built_again(tmp_path: Path, content: bytes) -> None:
    ts = toolset("get_thing")
    package_for(ts, tmp_path)
    only_entry(tmp_path).write_bytes(content)
    assert package_for(ts, tmp_path) == build_package(ts)
    assert only_entry(tmp_path).read_bytes() != content  # and kept anew


def test_an_entry_for_other_tools_under_the_key_is_not_used(tmp_path: Path) -> None:
    ts = toolset("get_thing")
    package_for(ts, tmp_path)
    only_entry(tmp_path).write_bytes(pickle.dumps(build_package(toolset("other_tool"))))
    assert package_for(ts, tmp_path) == build_package(ts)


def test_an_unwritable_cache_still_answers(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    ts = toolset("get_thing")
    assert package_for(ts, blocked / "packages") == build_package(ts)
