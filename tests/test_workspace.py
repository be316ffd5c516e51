"""The workspace: files kept between calls, confined by the sandbox this host has, size-capped,
and output too long for the answer kept whole there (head, tail and path in the answer)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from gocode.config import WorkspaceConfig, load_config
from gocode.run import kept, workdir
from gocode.run.kept import OUTPUT_DIR
from gocode.run.runner import RunResult
from gocode.toolbox import Toolbox
from tests.conftest import ROOT, background, config_from, demo_stdio, free_port, module_cache  # noqa: F401 (fixture)

NOTES = {"command": sys.executable, "args": [str(ROOT / "tests" / "servers" / "notes_server.py")]}
GOCODE = str(Path(sys.executable).parent / "gocode")


KEY = "t"  # codeMode.workspace.id of the tests' configs: workspaces are DIR/<model>--t


def notes_config(root: Path, **workspace_settings: object):
    settings = {"dir": str(root), "id": KEY, **workspace_settings}  # on by default
    return config_from({"notes": NOTES}, defaults={"codeMode": {"workspace": settings}})


def run_all(config, module_cache, *codes: str):  # noqa: F811
    async def go():
        async with Toolbox(config, module_cache=module_cache, prewarm=False) as box:
            return [await box.execute(code) for code in codes]

    return asyncio.run(go())


@pytest.mark.fast
def test_workspace_paths_per_model_and_session(tmp_path):
    settings = WorkspaceConfig(dir=str(tmp_path))
    assert workdir.path_for(settings, None) == tmp_path / "default"
    assert workdir.path_for(settings, "gpt-5") == tmp_path / "gpt-5"
    odd = workdir.path_for(settings, "../../etc")  # a model ref is no path
    assert odd.parent == tmp_path and odd.name.startswith("etc-")
    per_session = settings.model_copy(update={"scope": "session"})
    a, b = workdir.path_for(per_session, "m", "abc"), workdir.path_for(per_session, "m", "def")
    assert a == tmp_path / "m" / "sessions" / "abc" and a != b
    assert workdir.path_for(per_session, "m", None) == tmp_path / "m"  # no session known: the model's
    a.mkdir(parents=True)
    (a / "f.txt").write_text("x" * 10)
    names = [r["name"] for r in workdir.listing(per_session)]
    assert names == ["m", "m/session:abc"]
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("x")
    (a / "out").symlink_to(outside)  # a program's link out: cleaning removes the link, not its target
    (tmp_path / "m" / "sessions" / "zz").symlink_to(outside)  # no workspace: not listed, not measured
    assert [r["name"] for r in workdir.listing(per_session)] == names
    path, freed = workdir.clean(per_session, "m")
    assert path == tmp_path / "m" and freed > 0 and not path.exists()
    assert (outside / "keep.txt").read_text() == "x"


@pytest.mark.fast
def test_workspaces_are_keyed_by_config_and_model(tmp_path, monkeypatch):
    settings = WorkspaceConfig(dir=str(tmp_path))
    one, two = tmp_path / "one" / "gocode.yaml", tmp_path / "two" / "gocode.yaml"
    for cfg in (one, two):
        cfg.parent.mkdir()
        cfg.write_text("mcpServers: {}\n")
    a, b = workdir.owner(settings, str(one)), workdir.owner(settings, str(two))
    assert a != b and len(a) == 10  # two projects, one model name: two workspaces
    assert workdir.path_for(settings, "gpt-5", key=a) == tmp_path / f"gpt-5--{a}"
    monkeypatch.chdir(one.parent)  # the same file named relatively: the same workspace
    assert workdir.owner(settings, "gocode.yaml") == a
    # A config built in code: keyed by the working directory; an explicit id wins over both.
    assert workdir.owner(settings, "<config>") == workdir.owner(settings, None) != a
    assert workdir.owner(settings.model_copy(update={"id": "shared-1"}), str(one)) == "shared-1"
    with pytest.raises(ValueError, match="letters, digits"):
        WorkspaceConfig(id="../x")
    with pytest.raises(ValueError, match="totalMB"):
        WorkspaceConfig(maxMB=10, totalMB=5)
    assert WorkspaceConfig(maxMB=10).total_cap == 40 << 20


@pytest.mark.fast
@pytest.mark.skipif(os.geteuid() != 0 or not workdir.groups_usable(), reason="groups are handed out as root")
def test_a_shared_workspace_is_its_models_group_and_nothing_outside_is_touched(tmp_path):
    settings = WorkspaceConfig(dir=str(tmp_path / "root"), scope="session")
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    outside.chmod(0o600)
    a = workdir.path_for(settings, "a", "s1")
    a.mkdir(parents=True)
    (a / "made-0644.txt").write_text("x")
    (a / "made-0644.txt").chmod(0o4644)
    (a / "sub").mkdir(mode=0o700)
    (a / "sub" / "link").symlink_to(outside)  # a program's symlink to a file outside
    (a / "dirlink").symlink_to(tmp_path)  # … and to a directory outside
    os.link(outside, a / "hardlink")  # a file also linked from outside (as root: the test makes it)
    gid = workdir.share(a, settings)
    assert gid in workdir.GROUPS
    for d in (tmp_path / "root" / "a", tmp_path / "root" / "a" / "sessions", a):
        st = d.stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, gid, workdir.SHARED_MODE), d
    st = (a / "made-0644.txt").stat()
    assert (st.st_gid, stat.S_IMODE(st.st_mode)) == (gid, 0o664)  # group rw, no setuid
    st = (a / "sub").stat()
    assert (st.st_gid, stat.S_IMODE(st.st_mode)) == (gid, 0o2770)
    st = outside.stat()
    assert (st.st_gid, stat.S_IMODE(st.st_mode)) == (0, 0o600)  # neither the symlink nor the hard link followed
    # The model's group is chosen once; another model gets another; a session shares its model's.
    assert workdir.share(a, settings) == gid
    assert workdir.share(workdir.path_for(settings, "a", "s2"), settings) == gid
    assert workdir.share(workdir.path_for(settings, "b", "s1"), settings) != gid


@pytest.mark.go
def test_files_persist_between_calls(tmp_path, module_cache):  # noqa: F811
    write = 'must(0, os.WriteFile("state.txt", []byte("kept"), 0o644))\nwd, _ := os.Getwd()\nfmt.Println(wd == os.Getenv("GOCODE_WORKSPACE"))\n'
    read = 'fmt.Println(string(must(os.ReadFile("state.txt"))))\n'
    first, second = run_all(notes_config(tmp_path), module_cache, write, read)
    assert (first.output, second.output) == ("true\n", "kept\n"), (first.error_text(), second.error_text())
    assert (tmp_path / f"default--{KEY}" / "state.txt").read_text() == "kept"


ESCAPES = """\
fmt.Println("write ..:", os.WriteFile("../escape.txt", []byte("x"), 0o644) != nil)
_, err := os.ReadFile("../other/secret.txt")
fmt.Println("read ..:", err != nil)
must(0, os.Symlink(%s, "link"))
defer os.Remove("link")
_, err = os.ReadFile("link/secret.txt")
fmt.Println("read via link:", err != nil)
fmt.Println("write via link:", os.WriteFile("link/new.txt", []byte("x"), 0o644) != nil)
"""


@pytest.mark.go
def test_the_sandbox_keeps_a_program_inside_its_workspace(module_cache):  # noqa: F811
    # Open to everyone, so only the sandbox can refuse (not file permissions, when the program
    # runs as a user of its own).
    tmp_path = Path(tempfile.mkdtemp(prefix="gocode-escape-", dir="/tmp"))
    tmp_path.chmod(0o755)
    other = tmp_path / "other"
    other.mkdir(mode=0o777)
    other.chmod(0o777)
    (other / "secret.txt").write_text("secret")
    (other / "secret.txt").chmod(0o666)
    (result,) = run_all(notes_config(tmp_path), module_cache, ESCAPES % json.dumps(str(other)))
    tier = (result.sandbox or {}).get("tier")
    if tier is None:
        pytest.skip(f"this host runs programs unconfined: {result.sandbox}")
    assert result.ok, result.error_text()
    assert result.output == "write ..: true\nread ..: true\nread via link: true\nwrite via link: true\n"
    assert str(tmp_path / f"default--{KEY}") in result.sandbox["files"]["readWrite"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"default--{KEY}", "other"]
    assert sorted(p.name for p in other.iterdir()) == ["secret.txt"]
    # A program that fails on such a path is told what it may reach.
    (failed,) = run_all(
        notes_config(tmp_path), module_cache, 'fmt.Print(string(must(os.ReadFile("../other/secret.txt"))))'
    )
    assert failed.phase == "runtime" and "open ../other/secret.txt: permission denied" in failed.stderr
    assert (
        "\n(sandbox: the program may read and write only its working directory (the workspace) and its scratch "
        "directory ($TMPDIR); paths through `..` or a symlink that lead out of them are refused"
    ) in failed.stderr, failed.stderr
    shutil.rmtree(tmp_path)


@pytest.mark.go
def test_a_workspace_over_its_cap_is_a_clear_error(tmp_path, module_cache):  # noqa: F811
    grow = 'must(0, os.WriteFile("big.bin", make([]byte, 2<<20), 0o644))\nfmt.Println("wrote")\n'
    more = 'must(0, os.WriteFile("more.bin", make([]byte, 256<<10), 0o644))\nfmt.Println("wrote")\n'
    hello = 'fmt.Println("hello")\n'
    config = notes_config(tmp_path, maxMB=1)
    over, still, grown = run_all(config, module_cache, grow, hello, more)
    # Found over the cap after the run, or killed by the watch on it during the run.
    assert over.phase == "limit" and "gocode workspace clean" in over.stderr, over.error_text()
    assert "over its cap of 1 MB" in over.stderr or "all its caps allow (codeMode.workspace.maxMB" in over.stderr
    # Over its cap, a workspace still runs programs (that is how a model deletes files), but
    # one that grows it fails, and the model is told it is still over.
    assert still.ok and still.output == "hello\n", still.error_text()
    assert any("still over the cap" in w for w in still.warnings), still.warnings
    # The sandbox refuses the write itself; the answer says why and how out.
    assert grown.phase == "runtime" and "permission denied" in grown.stderr, grown.error_text()
    assert "workspace is over its cap" in grown.stderr and "gocode workspace clean" in grown.stderr, grown.stderr
    assert (tmp_path / f"default--{KEY}" / "big.bin").stat().st_size == 2 << 20  # nothing deleted silently
    cfg = tmp_path / "gocode.json"
    cfg.write_text(json.dumps({"defaults": {"codeMode": {"workspace": {"dir": str(tmp_path), "id": KEY}}}}))
    cleaned = subprocess.run([GOCODE, "workspace", "clean", "-c", str(cfg)], capture_output=True, text=True)
    assert cleaned.returncode == 0 and "removed" in cleaned.stderr
    (again,) = run_all(config, module_cache, hello)
    assert again.output == "hello\n" and not again.warnings, again.error_text()


@pytest.mark.go
def test_a_workspace_over_its_cap_runs_the_program_that_deletes_files(tmp_path, module_cache):  # noqa: F811
    ws = tmp_path / f"default--{KEY}"
    ws.mkdir()
    (ws / "big.bin").write_bytes(b"x" * (3 << 20))  # over the 1 MB cap before any run
    # Over its cap, the sandbox lets a program read and delete in its workspace, never write:
    # a new file is refused by the kernel at once (a watch would let a burst through first).
    write = (
        'err := os.WriteFile("more.bin", make([]byte, 1<<20), 0o644)\nfmt.Println(errors.Is(err, os.ErrPermission))\n'
    )
    delete = 'must(0, os.Remove("big.bin"))\nfmt.Println("deleted")\n'
    refused, deleted, wrote = run_all(notes_config(tmp_path, maxMB=1), module_cache, write, delete, write)
    assert refused.ok and refused.output == "true\n", (refused.output, refused.error_text())
    assert deleted.ok and deleted.output == "deleted\n", deleted.error_text()
    assert not deleted.warnings and not (ws / "big.bin").exists()
    assert wrote.ok and wrote.output == "false\n" and (ws / "more.bin").exists()  # under the cap again


@pytest.mark.go
def test_a_5mb_result_comes_back_as_head_tail_and_path(tmp_path, module_cache):  # noqa: F811
    big = "r := must(bigText(ctx, BigTextInput{Size: 5_000_000}))\nfmt.Print(r.Result)\n"
    (result,) = run_all(notes_config(tmp_path), module_cache, big)
    assert result.ok, result.error_text()
    assert result.output_bytes == 5_000_000 and not result.truncated
    kept = Path(result.output_file or "")
    assert kept.parent == tmp_path / f"default--{KEY}" / OUTPUT_DIR and kept.stat().st_size == 5_000_000
    assert result.output.startswith("BEGIN\nline 00000000\n") and result.output.endswith("END\n")
    rel = kept.relative_to(tmp_path / f"default--{KEY}")
    assert (
        f"[output: 5000000 bytes in all, kept whole in the file {rel} of the working directory ({kept} from a shell);"
    ) in result.output
    assert len(result.output) < 65536 + 400
    # The next program reads the rest from the file named in the answer.
    read = f'b := must(os.ReadFile({json.dumps(str(rel))}))\nlines := strings.Split(string(b), "\\n")\nfmt.Println(len(b), len(lines), lines[len(lines)-3])\n'
    (after,) = run_all(notes_config(tmp_path), module_cache, read)
    assert after.ok, after.error_text()
    assert after.output == "5000000 357145 line 00357141\n"
    assert os.path.getsize(kept) == 5_000_000


@pytest.mark.go
def test_a_result_longer_than_the_cap_comes_back_as_head_tail_and_path(tmp_path, module_cache):  # noqa: F811
    # One tool result too large to print, handed back whole with result(): 800 kB of JSON.
    code = 'r := must(bigText(ctx, BigTextInput{Size: 800_000}))\nresult(map[string]any{"text": r.Result})\n'

    async def go():
        async with Toolbox(notes_config(tmp_path), module_cache=module_cache, prewarm=False) as box:
            return await box.call("execute_go_code", {"code": code})

    answer = asyncio.run(go())
    text = answer.text
    assert not answer.is_error, text
    kept = Path(answer.result.meta["io.gocode/run"]["resultFile"])
    assert answer.run is not None and answer.run.result_file == str(kept) and len(answer.value["text"]) == 800_000
    assert kept.parent == tmp_path / f"default--{KEY}" / OUTPUT_DIR and kept.suffix == ".json"
    size = kept.stat().st_size
    assert size > 800_000 and json.loads(kept.read_text())["text"].startswith("BEGIN\nline 00000000\n")
    rel = kept.relative_to(tmp_path / f"default--{KEY}")
    assert text.startswith('result: {"text": "BEGIN\\nline 00000000\\n')
    assert (
        f"\n[result: {size} bytes in all, kept whole in the file {rel} of the working directory ({kept} from a shell);"
        in text
    )
    assert text.endswith('END\\n"}') and len(text) < 65536 + 400
    read = (
        f"var v struct{{ Text string }}\nmust(0, json.Unmarshal(must(os.ReadFile({json.dumps(str(rel))})), &v))\n"
        "fmt.Println(len(v.Text))\n"
    )
    (after,) = run_all(notes_config(tmp_path), module_cache, read)
    assert after.output == "800000\n", after.error_text()


# Run i of N: writes its file, waits until every run's file is there (all N run at once), reads
# them all, then overwrites the next run's file (another user's, when runs are users of their own).
CONCURRENT = """\
n, i := %d, %d
name := func(j int) string { return fmt.Sprintf("run-%%d.txt", j) }
must(0, os.WriteFile(name(i), []byte(strings.Repeat("x", i+1)), 0o644))
seen := 0
for deadline := time.Now().Add(40 * time.Second); seen < n && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
	seen = 0
	for j := 0; j < n; j++ {
		if b, err := os.ReadFile(name(j)); err == nil && len(b) == j+1 {
			seen++
		}
	}
}
var err error
for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
	if err = os.WriteFile(name((i+1)%%n)+".next", []byte("ok"), 0o644); err == nil {
		break
	}
}
must(0, err)
f := must(os.OpenFile("log.txt", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o666)) // the group's at once (umask 007)
fmt.Fprintln(f, i)
must(0, f.Close())
fmt.Println(os.Getuid(), seen)
"""

# A later run rewrites every file the concurrent runs left (each another user's).
REWRITE = """\
files := must(filepath.Glob("run-*.txt"))
for _, f := range files {
	must(0, os.WriteFile(f, []byte("rewritten"), 0o644))
}
log := must(os.ReadFile("log.txt"))
fmt.Println(len(files), len(strings.Fields(string(log))))
"""


@pytest.mark.go
def test_concurrent_runs_of_one_model_share_its_workspace_and_no_other_model_reads_it(tmp_path):
    n = 4
    root = tmp_path / "workspaces"
    config = {
        "mcpServers": {"weather": demo_stdio()},
        "defaults": {
            "model": "a",
            "codeMode": {"maxConcurrentRuns": n, "timeout": 120, "workspace": {"dir": str(root), "id": KEY}},
        },
        "models": [{"ref": "a"}, {"ref": "b"}],
    }
    cfg = tmp_path / "gocode.json"
    cfg.write_text(json.dumps(config))
    port = free_port()
    outputs: dict[int, str] = {}

    async def one(c: Client, i: int) -> None:
        r = await c.call_tool("execute_go_code", {"code": CONCURRENT % (n, i)})
        assert not r.is_error, "".join(getattr(p, "text", "") for p in r.content)
        outputs[i] = "".join(getattr(p, "text", "") for p in r.content)

    async def go() -> str:
        http = create_mcp_http_client(headers={"Authorization": "Bearer t"})
        async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c:
            async with anyio.create_task_group() as tg:
                for i in range(n):
                    tg.start_soon(one, c, i)
            r = await c.call_tool("execute_go_code", {"code": REWRITE})
            return "".join(getattr(p, "text", "") for p in r.content)

    cmd = [GOCODE, "serve", "-c", str(cfg), "--model", "a", "--transport", "http", "--port", str(port)]
    with background(cmd, port, env={"GOCODE_TOKEN": "t"}):
        rewrite = anyio.run(go)
    users = {line.split()[0] for line in outputs.values()}
    assert sorted(int(o.split()[1]) for o in outputs.values()) == [n] * n, outputs  # each saw all N at once
    assert rewrite == f"{n} {n}\n", rewrite
    a = root / f"a--{KEY}"
    assert sorted(p.name for p in a.glob("run-*.txt")) == [f"run-{i}.txt" for i in range(n)]
    assert all(p.read_text() == "rewritten" for p in a.glob("run-*.txt"))
    if os.geteuid() == 0 and workdir.groups_usable():  # each run a user of its own, one group
        assert len(users) == n, outputs
        st = a.stat()
        assert st.st_gid in workdir.GROUPS and stat.S_IMODE(st.st_mode) == workdir.SHARED_MODE

    # Another model's run reaches none of it, by the path or through `..`.
    secret = a / "run-0.txt"
    peek = (
        f"_, err := os.ReadFile({json.dumps(str(secret))})\nfmt.Println(err != nil)\n"
        '_, err = os.ReadFile("../a/run-0.txt")\nfmt.Println(err != nil)\n'
    )

    async def other() -> RunResult:
        async with Toolbox(load_config(cfg), "b", prewarm=False) as box:
            return await box.execute(peek)

    b = anyio.run(other)
    assert b.ok, b.error_text()
    if (b.sandbox or {}).get("tier") is not None:
        assert b.output == "true\ntrue\n"
        if os.geteuid() == 0 and workdir.groups_usable():
            assert (root / f"b--{KEY}").stat().st_gid != a.stat().st_gid  # kept out by file permissions too


# A program's own files in its workspace, planted where the controller keeps long output.
LONG = 'fmt.Print(strings.Repeat("a line of long output\\n", 10_000))\n'  # 220 kB, past the 64 KiB cap
PLANT_LINK = 'os.RemoveAll("gocode-output")\nmust(0, os.Symlink(%s, "gocode-output"))\nfmt.Println("planted")\n'


def two_models(root: Path, **workspace_settings: object):
    settings = {"dir": str(root), "id": KEY, **workspace_settings}
    return config_from(
        {"notes": NOTES},
        defaults={"model": "a", "codeMode": {"workspace": settings}},
        models=[{"ref": "a"}, {"ref": "b"}],
    )


def tree(path: Path) -> dict[str, tuple[int, int]]:
    """Every entry beneath ``path`` (and ``path`` itself): its mode and size, links not followed."""
    out = {".": (path.lstat().st_mode, 0)}
    for p in sorted(path.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(path))] = (st.st_mode, st.st_size)
    return out


def kept_here(result: RunResult, ws: Path) -> Path:
    kept = Path(result.output_file or "")
    assert kept.parent == ws / OUTPUT_DIR and not (ws / OUTPUT_DIR).is_symlink(), result.output_file
    assert kept.stat().st_size == result.output_bytes == 220_000
    return kept


@pytest.mark.go
def test_a_planted_gocode_output_link_never_leads_the_controller_outside(module_cache):  # noqa: F811
    tmp = Path(tempfile.mkdtemp(prefix="gocode-plant-", dir="/tmp"))
    tmp.chmod(0o755)
    outside = tmp / "outside"  # any directory on the host
    outside.mkdir()
    outside.chmod(0o755)
    for i in range(25):  # named like kept outputs, and older: what a prune by count would remove
        f = outside / f"run-20200101-0000{i:02d}-abcdef.txt"
        f.write_text("not gocode's")
        os.utime(f, (1e9 + i, 1e9 + i))
    before = tree(outside)
    root = tmp / "ws"
    config = two_models(root)
    a_ws, b_ws = root / f"a--{KEY}", root / f"b--{KEY}"

    async def go():
        async with Toolbox(config, "b", module_cache=module_cache, prewarm=False) as b:
            own = await b.execute(LONG)
        b_kept = tree(b_ws / OUTPUT_DIR)
        async with Toolbox(config, "a", module_cache=module_cache, prewarm=False) as a:
            plant = await a.execute(PLANT_LINK % json.dumps(str(outside)))
            assert own.ok and plant.output == "planted\n", (own.error_text(), plant.error_text())
            out = await a.execute(LONG)
            # The link is replaced by a directory of the workspace's own; the directory it named is as it was.
            assert out.ok, out.error_text()
            kept_here(out, a_ws)
            assert tree(outside) == before and stat.S_IMODE(outside.stat().st_mode) == 0o755
            # Pointed at another model's kept output: its files are untouched, this one's stay its own.
            plant = await a.execute(PLANT_LINK % json.dumps(f"../b--{KEY}/gocode-output"))
            assert plant.output == "planted\n", plant.error_text()
            out = await a.execute(LONG)
            assert out.ok, out.error_text()
            kept_here(out, a_ws)
            assert tree(b_ws / OUTPUT_DIR) == b_kept and len(b_kept) == 2

    try:
        asyncio.run(go())
    finally:
        shutil.rmtree(tmp)


@pytest.mark.go
def test_bad_files_in_place_of_gocode_output_fail_only_the_kept_copy(tmp_path, module_cache):  # noqa: F811
    config = notes_config(tmp_path)
    ws = tmp_path / f"default--{KEY}"
    dangling = PLANT_LINK % '"/nonexistent/gocode-output"'
    a_file = 'os.RemoveAll("gocode-output")\nmust(0, os.WriteFile("gocode-output", []byte("mine"), 0o644))\n'
    dirs = (
        'os.RemoveAll("gocode-output")\nfor i := 0; i < 25; i++ {\n'
        '\tmust(0, os.MkdirAll(fmt.Sprintf("gocode-output/run-20200101-0000%02d-abcdef.txt", i), 0o755))\n}\n'
    )

    async def go():
        async with Toolbox(config, module_cache=module_cache, prewarm=False) as box:
            planted = await box.execute(dangling)
            assert planted.ok, planted.error_text()
            out = await box.execute(LONG)
            assert out.ok, out.error_text()
            kept_here(out, ws)
            # A file of the program's own is not deleted: the output is cut, and the answer says why.
            planted = await box.execute(a_file)
            assert planted.ok, planted.error_text()
            out = await box.execute(LONG)
            assert out.ok and out.output_file is None, out.error_text()
            assert out.truncated and "gocode-output is a file, not a directory" in out.output
            assert (ws / "gocode-output").read_text() == "mine"
            # Directories named like kept files are not kept files: left alone, and the output is kept.
            planted = await box.execute(dirs)
            assert planted.ok, planted.error_text()
            out = await box.execute(LONG)
            assert out.ok, out.error_text()
            kept_here(out, ws)
            assert sum(p.is_dir() for p in (ws / OUTPUT_DIR).iterdir()) == 25

    asyncio.run(go())


@pytest.mark.fast
def test_open_kept_refuses_a_fifo_and_replaces_a_linked_path_to_the_workspace(tmp_path):
    settings = WorkspaceConfig(dir=str(tmp_path / "root"), scope="session")
    outside = tmp_path / "outside"
    outside.mkdir()
    model = workdir.path_for(settings, "m", key=KEY)
    model.mkdir(parents=True)
    (model / "sessions").symlink_to(outside)  # planted by a run of the model's own workspace
    ws = workdir.path_for(settings, "m", "s1", key=KEY)
    got = kept.open_kept(ws, settings, 1 << 20)
    assert got is not None
    got.file.close()
    assert not (model / "sessions").is_symlink() and got.path.parent == ws / OUTPUT_DIR and got.path.exists()
    assert list(outside.iterdir()) == []
    shutil.rmtree(ws / OUTPUT_DIR)
    os.mkfifo(ws / OUTPUT_DIR)
    with pytest.raises(workdir.WorkspaceError, match="gocode-output is a fifo, not a directory"):
        kept.open_kept(ws, settings, 1 << 20)


@pytest.mark.go
def test_kept_outputs_are_pruned_by_size_within_the_cap(tmp_path, module_cache):  # noqa: F811
    # Four outputs of 1.5 MB each in a 4 MB workspace: each kept whole, the oldest making room.
    code = 'fmt.Print(strings.Repeat("x", 1_500_000))\n'
    config = notes_config(tmp_path, maxMB=4)
    results = run_all(config, module_cache, code, code, code, code)
    for r in results:
        assert r.ok and r.output_file is not None, r.error_text()
        assert r.output_bytes == 1_500_000 and "1500000 bytes in all, kept whole in the file" in r.output
    ws = tmp_path / f"default--{KEY}"
    assert Path(results[-1].output_file or "").stat().st_size == 1_500_000
    assert workdir.usage(ws, config.defaults.code_mode.workdir).used <= 2 << 20  # half the cap, for kept files
    assert [p.name for p in (ws / OUTPUT_DIR).iterdir()] == [Path(results[-1].output_file or "").name]


@pytest.mark.go
def test_the_sessions_of_a_model_share_a_total_cap(tmp_path, module_cache):  # noqa: F811
    grow = 'must(0, os.WriteFile("f.bin", make([]byte, 700<<10), 0o644))\nfmt.Println("wrote")\n'
    config = notes_config(tmp_path, scope="session", maxMB=1, totalMB=2)

    async def go():
        async with Toolbox(config, module_cache=module_cache, prewarm=False) as box:
            return [await box.execute(grow, session=s) for s in ("s1", "s2", "s3")]

    one, two, three = asyncio.run(go())
    assert one.ok and two.ok, (one.error_text(), two.error_text())
    assert three.phase == "limit", three.error_text()
    assert "totalMB" in three.stderr and "gocode workspace clean" in three.stderr


@pytest.mark.go
def test_an_empty_session_of_a_model_over_its_total_cap_may_not_grow(tmp_path, module_cache):  # noqa: F811
    # s1 leaves the model over totalMB (its files stay: nothing is deleted silently). s2's empty
    # workspace then has no room at all, which is still a cap: the program may not write there
    # (it once wrote gigabytes and was told so afterwards).
    fill = 'must(0, os.WriteFile("big.bin", make([]byte, 2500<<10), 0o644))\nfmt.Println("filled")\n'
    grow = (
        'for i := 0; i < 20; i++ {\n\tmust(0, os.WriteFile(fmt.Sprintf("g%d.bin", i), make([]byte, 1<<20), 0o644))\n'
        '\ttime.Sleep(200 * time.Millisecond)\n}\nfmt.Println("survived")\n'
    )
    config = notes_config(tmp_path, scope="session", maxMB=1, totalMB=2)

    async def go():
        async with Toolbox(config, module_cache=module_cache, prewarm=False) as box:
            return await box.execute(fill, session="s1"), await box.execute(grow, session="s2")

    filled, grew = asyncio.run(go())
    assert not filled.ok, filled.output
    assert grew.phase == "runtime" and "survived" not in grew.output, (grew.output, grew.error_text())
    assert "workspace is over its cap" in grew.stderr, grew.stderr
    s2 = next(p for p in tmp_path.rglob("s2") if p.is_dir())
    assert list(s2.glob("g*.bin")) == []  # refused by the kernel, not killed after a burst


@pytest.mark.go
def test_a_tree_too_deep_to_walk_fails_only_its_models_runs_and_can_be_deleted(tmp_path, module_cache):  # noqa: F811
    # 1,100 levels: deeper than Python recurses; the controller's walks are loops holding at most
    # files.MAX_DEPTH descriptors, and a tree deeper than that counts as over any cap.
    deep = 'must(0, os.MkdirAll(strings.Repeat("d/", 1100), 0o755))\nfmt.Println("made")\n'
    hello = 'fmt.Println("hello")\n'
    # Deepest first: os.RemoveAll holds a descriptor per level, past the sandbox's 256.
    # (The first run may have been stopped before it made all 1,100: missing levels are skipped.)
    delete = (
        'for i := 1100; i > 0; i-- {\n\tif err := os.Remove(strings.Repeat("d/", i)); err != nil && !os.IsNotExist(err) {\n'
        '\t\treturn err\n\t}\n}\nfmt.Println("deleted")\n'
    )
    made, still, deleted, after = run_all(notes_config(tmp_path), module_cache, deep, hello, delete, hello)
    assert made.phase == "limit" and "gocode workspace clean" in made.stderr, made.error_text()
    assert still.ok and any("too deep to measure" in w for w in still.warnings), (still.error_text(), still.warnings)
    assert deleted.ok and deleted.output == "deleted\n", deleted.error_text()
    assert after.ok and not after.warnings, after.error_text()


@pytest.mark.go
def test_a_direct_runs_result_file_swapped_for_a_fifo_is_not_waited_on(tmp_path):
    # A program started with --direct (unsandboxed) gives result() back through a file, which it
    # may replace: a fifo there once blocked the controller's read for ever.
    code = (
        'p := os.Getenv("GOCODE_RESULT_FILE")\nmust(0, os.Remove(p))\nmust(0, syscall.Mkfifo(p, 0o600))\n'
        'fmt.Println("swapped")\n'
    )
    cfg = tmp_path / "gocode.json"
    cfg.write_text(json.dumps({"mcpServers": {"notes": NOTES}, "defaults": {"codeMode": {"sandbox": "off"}}}))
    try:
        got = subprocess.run(
            [GOCODE, "exec", "--direct", "--json", "-c", str(cfg), "-"],
            input=code, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("the controller waited on the fifo the program left in place of its result file")
    doc = json.loads(got.stdout)
    assert got.returncode == 0 and doc["output"] == "swapped\n" and doc["result"] is None, got.stderr
