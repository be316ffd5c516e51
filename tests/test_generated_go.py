"""The generated Go compiles, vets and is gofmt-clean, for friendly and hostile tool lists (needs Go)."""

from __future__ import annotations

import asyncio

import pytest

from gocode.program.code import ModelCode
from gocode.run.runner import run_program
from gocode.schema.builder import build_package
from gocode.schema.stdlib import STDLIB
from gocode.view.modelview import render_full
from tests.conftest import assert_go_package_clean
from tests.schemas import CPE_WEATHER, HOSTILE, LISTS, toolset

pytestmark = pytest.mark.go


@pytest.mark.parametrize(
    "tools", [CPE_WEATHER, HOSTILE, [*CPE_WEATHER, *HOSTILE, LISTS]], ids=["cpe", "hostile", "all"]
)
def test_bindings_compile_vet_and_gofmt(module_cache, tools, tmp_path):
    assert_go_package_clean(module_cache, build_package(toolset(tools)), tmp_path)


def test_every_auto_import_guard_compiles(module_cache):
    # Uses every package of the auto-import table at once: each guard must be valid Go. The SDK
    # (mcp) is in the table only so tools never shadow it; programs may not import it.
    code = "\n".join(
        f"_ = {name}.{_member(guard)}" for name, (_, guard) in sorted(STDLIB.items()) if "=" in guard and name != "mcp"
    )
    pkg = build_package(toolset([]))
    build = asyncio.run(module_cache.build(pkg, ModelCode(code + "\nvar _ iter.Seq[int]\n")))
    assert build.ok, build.output


def _member(guard: str) -> str:
    # "var _ = slices.Contains[[]int]" -> "Contains[[]int]"
    return guard.split("=", 1)[1].strip().split(".", 1)[1]


def test_nil_required_lists_are_sent_empty(module_cache, tmp_path):
    pkg = build_package(toolset([LISTS]))
    code = (
        "in := AddNotesInput{Items: []AddNotesInputItemsItem{{}}}\n"
        "b, err := json.Marshal(in)\nif err != nil {\n\treturn err\n}\nfmt.Println(string(b))\n"
    )
    build = asyncio.run(module_cache.build(pkg, ModelCode(code)))
    assert build.ok, build.output
    result = asyncio.run(run_program(build.binary, {"GOCODE_SERVERS": "{}"}, tmp_path, timeout=30, max_output=10000))
    assert result.output == '{"items":[{"tags":[],"meta":{}}]}\n', result.stderr
    assert "MarshalJSON" not in render_full(pkg)  # an implementation detail the model need not read


def test_tool_named_like_a_package_coexists_with_its_auto_import(module_cache):
    pkg = build_package(toolset(HOSTILE))
    build = asyncio.run(module_cache.build(pkg, ModelCode("_ = execTool\n_ = exec.Command\n")))
    assert build.ok, build.output
