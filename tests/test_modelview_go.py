"""The program compiled for a call accepts exactly what the model view shows (needs Go).

From the full view of the whole corpus, a model program is generated that names every type,
sets every struct field with the type the view gives it, gives every enum type each value it lists,
and assigns every tool function to a variable of the signature the view declares. It is built
and run through CodeMode.execute (no tool is called, so no server is needed).
"""

from __future__ import annotations

import asyncio
import re
import subprocess

import pytest

from gocode.codemode import CodeMode
from gocode.config import Config
from gocode.run.reach import OwnSessions
from gocode.view.modelview import render_full
from tests.corpus_data import CORPUS, all_package, load, load_all

pytestmark = pytest.mark.go


def program_from_view(view: str) -> str:
    lines: list[str] = []
    struct: str | None = None
    for line in view.splitlines():
        if line == "}":
            struct = None
        elif m := re.match(r"^type (\w+) \w+ // (.*)$", line):  # an enum and its values
            lines += [f"var _ {m.group(1)} = {v}" for v in re.findall(r'"(?:[^"\\]|\\.)*"|[-+.\w]+', m.group(2))]
        elif m := re.match(r"^type (\w+)", line):
            lines.append(f"var _ {m.group(1)}")
            struct = m.group(1) if line.endswith("struct {") else None
        elif struct and (m := re.match(r"^\t(\w+) +([^/]+?)\s*(//.*)?$", line)):
            lines.append(f"_ = {struct}{{{m.group(1)}: *new({m.group(2)})}}")
        elif (m := re.match(r"^func (\w+)\((.*)\) \((.*)\)$", line)) and m.group(1) != "ptr":
            lines.append(f"var _ func({m.group(2)}) ({m.group(3)}) = {m.group(1)}")
    return "\n".join(lines) + '\nfmt.Println("ok")\n'


def test_a_program_written_from_the_view_compiles(module_cache):
    cm = CodeMode(Config.model_validate({"mcpServers": {}}), module_cache=module_cache)
    cm.use(list(load_all().servers))
    code = program_from_view(render_full(cm.package))
    assert code.count("var _ func(") == len(cm.package.funcs)
    assert code.count(": *new(") > 1000 and len(re.findall(r'^var _ \w+ = "', code, re.M)) > 1000
    result = asyncio.run(cm.execute(code, reach=OwnSessions({})))  # no server is called
    assert result.ok, result.error_text()[-3000:]
    assert result.output == "ok\n"


def test_a_tool_own_type_name_still_compiles_after_dedup(module_cache):
    cm = CodeMode(Config.model_validate({"mcpServers": {}}), module_cache=module_cache)
    cm.use(list(load(CORPUS / "real" / "filesystem.json").servers))
    view = cm.declarations()
    assert "GetFileInfoInput" not in view and "func getFileInfo(context.Context, CreateDirectoryInput)" in view
    code = 'var a GetFileInfoInput = CreateDirectoryInput{Path: "x"}\nvar b ReadTextFileInput = ReadFileInput{Path: "y"}\nfmt.Println(a.Path, b.Path)\n'
    result = asyncio.run(cm.execute(code, reach=OwnSessions({})))
    assert result.ok, result.error_text()
    assert result.output == "x y\n"


def test_the_names_earlier_gocode_versions_gave_shared_types_still_compile(module_cache):
    cm = CodeMode(Config.model_validate({"mcpServers": {}}), module_cache=module_cache)
    cm.use([*load(CORPUS / "real" / "git.json").servers, *load(CORPUS / "real" / "filesystem.json").servers])
    view = cm.declarations()
    assert "RepoPathInput" not in view and "PathInput" not in view  # hidden: one name per type is shown
    code = (
        'var s RepoPathInput = GitStatusInput{RepoPath: "r"}\n'
        "var _ func(context.Context, RepoPathInput) (string, error) = gitStatus\n"
        "var _ func(context.Context, RepoPathInput) (string, error) = gitReset\n"
        'var p PathInput = GetFileInfoInput{Path: "p"}\n'
        "var _ func(context.Context, PathInput) (ListDirectoryOutput, error) = listDirectory\n"
        "var _ ContentOutput = ReadTextFileOutput{}\n"
        "fmt.Println(s.RepoPath, p.Path)\n"
    )
    result = asyncio.run(cm.execute(code, reach=OwnSessions({})))
    assert result.ok, result.error_text()
    assert result.output == "r p\n"


def test_the_full_view_is_gofmt_clean(tmp_path):
    view = tmp_path / "view.go"
    view.write_text('package x\n\nimport "context"\n\n' + render_full(all_package()))
    fmt = subprocess.run(["gofmt", "-l", str(view)], capture_output=True, text=True)
    assert fmt.returncode == 0 and fmt.stdout == "", fmt.stdout + fmt.stderr
