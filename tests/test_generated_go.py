"""The generated Go compiles, vets and is gofmt-clean, for friendly and hostile tool lists (needs Go)."""

from __future__ import annotations

import asyncio
import subprocess

import pytest

from gocode.gotypes import build_package
from gocode.modelcode import STDLIB, split_code
from gocode.render import render_declarations, tools_import_path
from gocode.runner import run_program
from tests.schemas import CPE_WEATHER, HOSTILE, LISTS, toolset

pytestmark = pytest.mark.go


def reference_all(pkg) -> str:
    return "\n".join(f"_ = {f.name}" for f in pkg.funcs) + "\n"


@pytest.mark.parametrize(
    "tools", [CPE_WEATHER, HOSTILE, [*CPE_WEATHER, *HOSTILE, LISTS]], ids=["cpe", "hostile", "all"]
)
def test_bindings_compile_vet_and_gofmt(workspace, tools):
    pkg = build_package(toolset(tools))
    build = asyncio.run(workspace.build(pkg, split_code(reference_all(pkg))))
    assert build.ok, build.output
    pkg_dir = workspace.dir / tools_import_path(pkg).removeprefix("gocodews/")
    env = workspace.go_env()
    fmt = subprocess.run(["gofmt", "-l", str(pkg_dir), str(workspace.dir / "rt")], capture_output=True, text=True)
    assert fmt.stdout == "" and fmt.returncode == 0, fmt.stdout + fmt.stderr
    vet = subprocess.run(
        [workspace.toolchain.go, "vet", f"./{tools_import_path(pkg).removeprefix('gocodews/')}", "./rt"],
        cwd=workspace.dir, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert vet.returncode == 0, vet.stderr
    # The declarations the model sees are valid Go too (as a file of their own).
    decl_file = workspace.dir / "runs" / f"decl_{pkg.digest[:8]}.go"
    decl_file.write_text('package x\n\nimport "context"\n\n' + render_declarations(pkg))
    try:
        fmt = subprocess.run(["gofmt", "-l", str(decl_file)], capture_output=True, text=True)
        assert fmt.stdout == "" and fmt.returncode == 0, fmt.stdout + fmt.stderr
    finally:
        decl_file.unlink()


def test_every_auto_import_guard_compiles(workspace):
    # Uses every package of the auto-import table at once: each guard must be valid Go.
    code = "\n".join(f"_ = {name}.{_member(guard)}" for name, (_, guard) in sorted(STDLIB.items()) if "=" in guard)
    pkg = build_package(toolset([]))
    build = asyncio.run(workspace.build(pkg, split_code(code + "\nvar _ iter.Seq[int]\n")))
    assert build.ok, build.output


def _member(guard: str) -> str:
    # "var _ = slices.Contains[[]int]" -> "Contains[[]int]"
    return guard.split("=", 1)[1].strip().split(".", 1)[1]


def test_nil_required_lists_are_sent_empty(workspace, tmp_path):
    pkg = build_package(toolset([LISTS]))
    code = (
        "in := AddNotesInput{Items: []AddNotesInputItemsItem{{}}}\n"
        "b, err := json.Marshal(in)\nif err != nil {\n\treturn err\n}\nfmt.Println(string(b))\n"
    )
    build = asyncio.run(workspace.build(pkg, split_code(code)))
    assert build.ok, build.output
    result = asyncio.run(run_program(build.binary, {"GOCODE_SERVERS": "{}"}, tmp_path, timeout=30, max_output=10000))
    assert result.output == '{"items":[{"tags":[],"meta":{}}]}\n', result.stderr
    assert "MarshalJSON" not in render_declarations(pkg)  # an implementation detail the model need not read


def test_tool_named_like_a_package_coexists_with_its_auto_import(workspace):
    pkg = build_package(toolset(HOSTILE))
    build = asyncio.run(workspace.build(pkg, split_code("_ = execTool\n_ = exec.Command\n")))
    assert build.ok, build.output
