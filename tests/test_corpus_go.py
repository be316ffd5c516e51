"""The whole schema corpus as one Go package: it compiles, vets and is gofmt-clean (needs Go)."""

from __future__ import annotations

import asyncio
import subprocess

import pytest

from gocode.gotypes import build_package
from gocode.modelcode import split_code
from gocode.render import render_declarations, tools_import_path
from tests.corpus_data import load_all

pytestmark = pytest.mark.go


def test_corpus_compiles_vets_and_is_gofmt_clean(workspace, tmp_path):
    pkg = build_package(load_all())
    assert len(pkg.funcs) >= 150  # the real servers alone list that many tools
    code = "\n".join(f"_ = {f.name}" for f in pkg.funcs) + "\n"
    build = asyncio.run(workspace.build(pkg, split_code(code)))
    assert build.ok, build.output
    rel = tools_import_path(pkg).removeprefix("gocodews/")
    fmt = subprocess.run(
        ["gofmt", "-l", str(workspace.dir / rel), str(workspace.dir / "rt")], capture_output=True, text=True
    )
    assert fmt.stdout == "" and fmt.returncode == 0, fmt.stdout + fmt.stderr
    vet = subprocess.run(
        [workspace.toolchain.go, "vet", f"./{rel}", "./rt"], cwd=workspace.dir, env=workspace.go_env(),
        capture_output=True, text=True,
    )  # fmt: skip
    assert vet.returncode == 0, vet.stderr
    decls = tmp_path / "decls.go"
    decls.write_text('package x\n\nimport "context"\n\n' + render_declarations(pkg))
    fmt = subprocess.run(["gofmt", "-l", str(decls)], capture_output=True, text=True)
    assert fmt.stdout == "" and fmt.returncode == 0, fmt.stdout + fmt.stderr
