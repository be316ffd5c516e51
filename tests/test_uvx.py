"""gocode with only Python: the README's one line (``uvx --from <wheel> gocode serve -c ...``) run as
an MCP client runs it, in an empty home, from a PATH without Go, so gocode fetches Go itself.

The Go toolchain's zip comes from the real module proxy into ``.cache/goproxy`` (a ``file://``
proxy, listed first in GOPROXY) the first time, so CI downloads its 70 MB once; the checksum
database is the real one, through the proxy, every time. uv's package downloads are kept in
``.cache/uv`` for the same reason; the environment uvx makes from the wheel is new each time.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from gocode.compile import gofetch
from tests.conftest import ROOT

UV = Path(sys.executable).with_name("uv")
GOPROXY_CACHE = ROOT / ".cache" / "goproxy"
REAL_PROXY = "https://proxy.golang.org"
SETUP_DEADLINE = 900  # s: Go fetched, the SDK downloaded and compiled on a busy 2-core machine
CODE = """\
city, err := getCity(ctx)
if err != nil {
	return err
}
w, err := getWeather(ctx, GetWeatherInput{City: city.City})
if err != nil {
	return err
}
fmt.Printf("%s: %.1f %s\\n", city.City, w.Temperature, w.Unit)
"""


def cached_toolchain_proxy() -> str:
    """``file://`` of a proxy holding this machine's Go toolchain zip, fetched from the real proxy once."""
    path = f"{gofetch.MODULE}/@v/{gofetch.module_version()}.zip"
    dest = GOPROXY_CACHE / path
    if not dest.is_file():
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + f".{os.getpid()}")
        assert gofetch.download(f"{REAL_PROXY}/{path}", part, lambda _m: None, "Go")
        part.replace(dest)
    return f"file://{GOPROXY_CACHE}"


def path_without_go(bindir: Path) -> str:
    """PATH with only uv added, less every directory that holds ``go`` or this checkout's ``gocode``."""
    keep = [str(bindir)]
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if entry and not (Path(entry) / "go").exists() and not (Path(entry) / "gocode").exists():
            keep.append(entry)
    return os.pathsep.join(keep)


async def serve_and_call(params: StdioServerParameters, errlog: Path) -> tuple[list[str], str]:
    with open(errlog, "w") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            deadline = time.monotonic() + SETUP_DEADLINE
            while True:  # the first calls wait for Go to be set up, then ask to be retried
                result = await session.call_tool("execute_go_code", {"code": CODE})
                phase = (result.meta or {}).get("io.gocode/run", {}).get("phase")
                if phase != "warming" or time.monotonic() > deadline:
                    return names, "".join(c.text for c in result.content if c.type == "text")


@pytest.mark.net
@pytest.mark.timeout(SETUP_DEADLINE + 300)
def test_uvx_from_the_wheel_serves_with_no_go_installed(tmp_path):
    subprocess.run([str(UV), "build", "--wheel", "-o", str(tmp_path / "dist"), str(ROOT)], check=True, timeout=300)
    (wheel,) = (tmp_path / "dist").glob("gocode-*.whl")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("uv", "uvx"):
        (bindir / tool).symlink_to(UV.with_name(tool))
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOCODE_", "XDG_", "GO", "VIRTUAL_ENV"))}
    env.update(
        HOME=str(home),
        PATH=path_without_go(bindir),
        GOPROXY=f"{cached_toolchain_proxy()},{REAL_PROXY}",
        UV_CACHE_DIR=str(ROOT / ".cache" / "uv"),
        UV_PYTHON_DOWNLOADS="never",  # the Python that runs gocode is the machine's, as for a user
        GOCODE_STD_BACKGROUND="0",  # nothing left compiling in the background after the test
    )
    assert shutil.which("go", path=env["PATH"]) is None and shutil.which("gocode", path=env["PATH"]) is None
    config = tmp_path / "gocode.yaml"
    # The config as the README shows it: the demo server, started by uvx from the same wheel.
    # A stdio server gets only its config's env and a minimal base (docs/operations.md): uv's own
    # settings go in its env, as a user's would.
    uv_env = {k: env[k] for k in ("UV_CACHE_DIR", "UV_PYTHON_DOWNLOADS")}
    demo = {"command": "uvx", "args": ["--from", str(wheel), "gocode", "demo-server"], "env": uv_env}
    config.write_text(yaml.safe_dump({"mcpServers": {"weather": demo}}))
    # The client's config line as the README shows it.
    params = StdioServerParameters(
        command="uvx", args=["--from", str(wheel), "gocode", "serve", "-c", str(config)], env=env, cwd=str(tmp_path)
    )
    names, text = asyncio.run(serve_and_call(params, tmp_path / "stderr.log"))
    log = (tmp_path / "stderr.log").read_text()
    assert names == ["execute_go_code"], log
    assert text.strip() == "Paris: 18.5 celsius", (text, log)  # the demo server's default city and unit
    # Go came from the module proxy, checked against the checksum database, into the empty home's cache.
    assert f"downloading Go {gofetch.GO_VERSION} for {gofetch.platform_name()}" in log
    assert "checking Go" in log and "against the checksum database" in log and "warning" not in log
    assert (home / ".cache" / "gocode" / "toolchains" / f"go{gofetch.GO_VERSION}.{gofetch.platform_name()}").is_dir()
