"""Real third-party servers: server-everything (npm) over stdio and mcp-server-time (PyPI) (needs Go)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import EVERYTHING, TIME_SERVER, code_mode, config_from, need, run

pytestmark = [pytest.mark.go, pytest.mark.net]


@pytest.fixture(scope="module")
def everything(module_cache):
    return code_mode(config_from({"everything": {"command": need(EVERYTHING)}}), module_cache)


@pytest.fixture(scope="module")
def time_cm(module_cache):
    return code_mode(config_from({"time": {"command": need(TIME_SERVER)}}), module_cache)


def test_everything_lists_all_tools_and_every_function_compiles(everything):
    names = {f.tool for f in everything.package.funcs}
    assert {"echo", "get-sum", "get-structured-content", "get-tiny-image", "get-env"} <= names
    assert "get-roots-list" not in names  # gocode advertises no roots capability
    r = run(everything, "\n".join(f"_ = {f.name}" for f in everything.package.funcs) + "\n")
    assert r.ok, r.error_text()


def test_everything_text_structured_and_image_results(everything):
    code = """\
echoed, err := echo(ctx, EchoInput{Message: "héllo \\"go\\""})
if err != nil {
	return err
}
sum, err := getSum(ctx, GetSumInput{A: 2, B: 40})
if err != nil {
	return err
}
weather, err := getStructuredContent(ctx, GetStructuredContentInput{Location: GetStructuredContentInputLocationChicago})
if err != nil {
	return err
}
image, err := getTinyImage(ctx)
if err != nil {
	return err
}
fmt.Println(echoed)
fmt.Println(sum)
fmt.Printf("%.0f %s\\n", weather.Temperature, weather.Conditions)
fmt.Println(len(image.Media), image.Media[0].MIMEType, bytes.HasPrefix(image.Media[0].Data, []byte("\\x89PNG")))
"""
    r = run(everything, code)
    assert r.ok, r.error_text()
    lines = r.output.splitlines()
    assert lines[0] == 'Echo: héllo "go"'
    assert "42" in lines[1]
    assert lines[2].split()[0].lstrip("-").isdigit()
    # The image tool is typed as Content, its bytes decoded: what the model view shows.
    assert lines[-1] == "1 image/png true"


def test_time_server_chain(time_cm):
    code = """\
now, err := getCurrentTime(ctx, GetCurrentTimeInput{Timezone: "Europe/Paris"})
if err != nil {
	return err
}
conv, err := convertTime(ctx, ConvertTimeInput{SourceTimezone: "Europe/Paris", Time: "12:00", TargetTimezone: "Asia/Tokyo"})
if err != nil {
	return err
}
fmt.Println(now.Timezone, conv.Target.Timezone, conv.Target.Datetime != "")
"""
    r = run(time_cm, code)
    assert r.ok, r.error_text()
    assert r.output == "Europe/Paris Asia/Tokyo true\n"


def test_time_server_tool_error(time_cm):
    r = run(
        time_cm,
        'if _, err := getCurrentTime(ctx, GetCurrentTimeInput{Timezone: "Mars/Olympus"}); err != nil {\n\treturn err\n}\n',
    )
    assert r.phase == "runtime" and "Mars/Olympus" in r.stderr, r.error_text()


@pytest.mark.parametrize(("mode", "expected"), [("modern-only", "2026-07-28"), ("exit-on-discover", "2025-11-25")])
def test_protocol_eras_work_in_discovery_and_in_go(module_cache, mode, expected):
    # Wrap the real mcp-server-time so it refuses initialize (modern-only) or dies on the
    # server/discover probe (rmcp-like): both must work on the Python side and in Go.
    proxy = {
        "command": sys.executable,
        "args": [str(Path(__file__).parent / "era_proxy.py"), mode, "--", need(TIME_SERVER)],
    }
    cm = code_mode(config_from({"time": proxy}), module_cache)
    assert cm.view.protocols["time"] == expected
    r = run(
        cm,
        'now, err := getCurrentTime(ctx, GetCurrentTimeInput{Timezone: "Asia/Tokyo"})\nif err != nil {\n\treturn err\n}\nfmt.Println(now.Timezone)\n',
    )
    assert r.ok, r.error_text()
    assert r.output == "Asia/Tokyo\n"
