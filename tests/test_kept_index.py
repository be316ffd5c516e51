"""BM25's search index kept on disk per tool set (gocode/search/kept_index.py): read back while the
tools and gocode are the same, built afresh otherwise, and ranking the same either way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gocode.schema.builder import build_package
from gocode.search import kept_index
from gocode.search.index import SearchIndex, entries
from gocode.toolset import ServerTools, ToolInfo, ToolSet

pytestmark = pytest.mark.fast

TOOLS = {
    "get_weather": "Current weather for a city.",
    "get_city": "The city the user is in.",
    "create_issue": "Open a new issue in a repository.",
    "list_pull_requests": "List the pull requests of a repository.",
}
QUERIES = ["weather in paris", "open a bug", "which PRs are open", "my city"]


def toolset(tools: dict[str, str] = TOOLS) -> ToolSet:
    schema = {"type": "object", "properties": {"q": {"type": "string", "description": "What to look for."}}}
    return ToolSet((ServerTools("s", tuple(ToolInfo("s", n, d, schema) for n, d in tools.items())),))


def index(ts: ToolSet, root: Path | None) -> SearchIndex:
    """The tool set's index, kept under ``root`` (None: in memory only)."""
    kept = kept_index.entry_dir(ts, root) if root is not None else None
    return SearchIndex(entries(ts, build_package(ts)), semantic=False, kept=kept)


def rankings(ix: SearchIndex) -> list[list[tuple[str, float]]]:
    return [[(e.tool, round(score, 9)) for e, score in ix.ranking(q, 4).scored] for q in QUERIES]


def test_a_kept_index_ranks_as_one_built_in_memory_and_is_read_back(tmp_path: Path) -> None:
    ts = toolset()
    in_memory = rankings(index(ts, None))
    assert rankings(index(ts, tmp_path)) == in_memory  # built and kept
    (entry,) = tmp_path.glob("*.index")
    inode = entry.stat().st_ino
    os.utime(entry, (1, 1))
    assert rankings(index(ts, tmp_path)) == in_memory  # read back
    assert [p.stat().st_ino for p in tmp_path.glob("*.index")] == [inode]  # not written again
    assert entry.stat().st_mtime > 1  # reading marks it used
    assert not list(tmp_path.glob(".tmp-*"))


def test_another_tool_set_is_another_entry(tmp_path: Path) -> None:
    index(toolset(), tmp_path)._lex()
    changed = toolset({**TOOLS, "get_weather": "Barometric pressure for a city."})
    ix = index(changed, tmp_path)
    assert [e.tool for e in ix.search("barometric pressure", 1)] == ["get_weather"]
    assert len(list(tmp_path.glob("*.index"))) == 2


def test_another_gocode_is_another_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ts = toolset()
    before = kept_index.entry_dir(ts, tmp_path)
    monkeypatch.setattr(kept_index, "index_fingerprint", lambda: "another gocode")
    assert kept_index.entry_dir(ts, tmp_path) != before


@pytest.mark.parametrize("damage", ["state", "tantivy", "empty"])
def test_a_torn_entry_is_built_again(tmp_path: Path, damage: str) -> None:
    ts = toolset()
    expected = rankings(index(ts, None))
    index(ts, tmp_path)._lex()
    (entry,) = tmp_path.glob("*.index")
    if damage == "state":
        (entry / kept_index.STATE_FILE).write_bytes(b"not a pickle")
    elif damage == "tantivy":
        (entry / "meta.json").write_text("{")
    else:
        for p in entry.iterdir():
            p.unlink()
    assert rankings(index(ts, tmp_path)) == expected
    assert rankings(index(ts, tmp_path)) == expected  # and kept anew, whole


def test_an_unwritable_cache_still_searches(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    ts = toolset()
    assert rankings(index(ts, blocked)) == rankings(index(ts, None))


def test_only_the_newest_entries_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept_index, "MAX_ENTRIES", 2)
    for n in range(4):
        index(toolset({**TOOLS, f"tool_{n}": "Another tool."}), tmp_path)._lex()
    assert len(list(tmp_path.glob("*.index"))) == 2
