"""The loopback runtime answers as the SDK's does: the model-code corpus and the examples, both ways.

Pooled runs link the thin loopback runtime (gocode.compile.runners); the SDK's is the reference.
Every program of tests/corpus/programs, the demo's example and programs that use each part of
the runtime (typed calls, callTool, callToolStream's progress, result(), searchTools, every kind
of tool error, content of every type) run through the same Toolbox once per runner, and must
give the same output, errors, result and recorded calls. A program that could tell the
runtimes apart is linked with the SDK's (its metadata says so).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest

from gocode.blocking import SyncToolbox
from gocode.compile import runners
from gocode.demo.runner import DEMO_CODE, demo_config
from gocode.program.code import ModelCode
from gocode.run.result import RunResult
from tests.conftest import EVERYTHING, config_from, demo_stdio, need
from tests.model_programs import Program, programs

pytestmark = pytest.mark.go

PROGRAMS = programs()

# Programs whose output is not the same from one run to the next, whatever the runtime: their
# outcome is compared without it (the phase, the errors and the calls still are).
NONDETERMINISTIC = re.compile(r"crypto_rand|rand_v2|time_since")

# Each part of the runtime a program can reach, against the demo server and server-everything.
FEATURES = {
    "typed": DEMO_CODE,
    "must": "c := must(getCity(ctx))\nw := must(getWeather(ctx, GetWeatherInput{City: c.City}))\nfmt.Println(c.City, w.Conditions)",
    "call_tool": 'v, err := callTool(ctx, "weather.get_weather", map[string]any{"city": "Oslo"})\nfmt.Println(v, err)',
    "call_tool_nil_args": 'v, err := callTool(ctx, "weather.get_city", nil)\nfmt.Println(v, err)',
    "unknown_server": 'v, err := callTool(ctx, "nowhere.get_city", nil)\nfmt.Println(v, err)',
    "unknown_tool": 'v, err := callTool(ctx, "weather.nope", nil)\nfmt.Println(v, err)',
    "bad_args": 'v, err := callTool(ctx, "weather.get_weather", map[string]any{"city": 7})\nfmt.Println(v, err)',
    "nan_args": 'v, err := callTool(ctx, "weather.get_weather", map[string]any{"city": math.NaN()})\nfmt.Println(v, err)',
    "tool_error": 'v, err := callTool(ctx, "everything.get-resource-reference", map[string]any{"resourceType": "nope", "resourceId": 1})\nfmt.Println(v, err)',
    "echo": 'v, err := callTool(ctx, "everything.echo", map[string]any{"message": "héllo \\u2028 \\"q\\""})\nfmt.Println(v, err)',
    "structured": 'v, err := callTool(ctx, "everything.get-structured-content", map[string]any{"location": "New York"})\nfmt.Println(v, err)',
    "image": 'v, err := callTool(ctx, "everything.get-tiny-image", nil)\nfmt.Println(len(fmt.Sprint(v)), err)',
    "resource_links": 'v, err := callTool(ctx, "everything.get-resource-links", map[string]any{"count": 2})\nfmt.Println(v, err)',
    "annotated": 'v, err := callTool(ctx, "everything.get-annotated-message", map[string]any{"messageType": "error", "includeImage": true})\nfmt.Println(v, err)',
    "progress": (
        "var seen []string\n"
        'v, err := callToolStream(ctx, "everything.trigger-long-running-operation", map[string]any{"duration": 1, "steps": 3},\n'
        '\tfunc(p ToolProgress) { seen = append(seen, fmt.Sprintf("%g/%g %s", p.Progress, p.Total, p.Message)) })\n'
        'fmt.Println(v, err)\nfmt.Println(strings.Join(seen, "|"))\n'
        '_, err = callToolStream(ctx, "everything.nope", nil, nil)\nfmt.Println(err)'
    ),
    "result": 'result(map[string]any{"city": must(getCity(ctx)).City, "n": 3})',
    "result_unencodable": "result(func() {})",
    "search": 'm, err := searchTools(ctx, "weather of a city")\nfmt.Println(len(m) > 0, err)\n_, err = searchTools(ctx, "  ")\nfmt.Println(err)',
    "parallel": (
        "var wg sync.WaitGroup\nout := make([]string, 8)\n"
        "for i := range out {\n\twg.Add(1)\n\tgo func() {\n\t\tdefer wg.Done()\n"
        '\t\tw, err := getWeather(ctx, GetWeatherInput{City: fmt.Sprint("c", i)})\n\t\tout[i] = fmt.Sprint(w.Conditions, err)\n\t}()\n}\n'
        'wg.Wait()\nfmt.Println(strings.Join(out, ","))'
    ),
    "cancelled": "c2, cancel := context.WithCancel(ctx)\ncancel()\n_, err := getCity(c2)\nfmt.Println(err)",
    "returned_error": 'return fmt.Errorf("stop: %w", errors.New("boom"))',
    "panic": "var m map[string]int\nm[must(getCity(ctx)).City] = 1",
    "build_info": "bi, ok := debug.ReadBuildInfo()\nfmt.Println(ok, bi.Path, len(bi.Deps) > 0)",
}


def outcome(r: RunResult, deterministic: bool = True) -> dict[str, Any]:
    """What a run answered, less what no two runs share (timings, the run's ids, the runner)."""
    return {
        "ok": r.ok,
        "phase": r.phase,
        "exit_code": r.exit_code,
        "output": _stable(r.output) if deterministic else None,
        "stderr": _stable(r.stderr) if deterministic or r.phase != "ok" else None,
        "diagnostics": [d.as_json() if hasattr(d, "as_json") else str(d) for d in r.diagnostics],
        "warnings": r.warnings,
        "result": r.result,
        "truncated": r.truncated,
        "calls": sorted((c.server, c.tool, c.error or "") for c in r.tool_calls),  # parallel calls end in any order
        "plan": r.plan,
    }


def _stable(text: str) -> str:
    # A goroutine's stack shows addresses, frame offsets and goroutine numbers.
    text = re.sub(r"0x[0-9a-f]+", "0x?", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", "<time>", text)  # slog
    text = re.sub(r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d", "<time>", text)  # log
    # A connection's own port: the controller's endpoint and the program's side of it.
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:?", text)
    return re.sub(r"goroutine \d+", "goroutine ?", text)


def both(box: SyncToolbox, code: str) -> tuple[RunResult, RunResult]:
    """``code`` run with the SDK's runtime, then with the loopback one (as pooled runs are)."""
    runners.SDK_ONLY = True
    try:
        exact = box.execute(code)
    finally:
        runners.SDK_ONLY = False
    return exact, box.execute(code)


@pytest.fixture(scope="module")
def demo_box(module_cache) -> Iterator[SyncToolbox]:
    with SyncToolbox(demo_config(), module_cache=module_cache) as tb:
        yield tb


@pytest.fixture(scope="module")
def feature_box(module_cache) -> Iterator[SyncToolbox]:
    config = config_from({"weather": demo_stdio(), "everything": {"command": need(EVERYTHING)}})
    with SyncToolbox(config, module_cache=module_cache) as tb:
        yield tb


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.name)
def test_corpus_program_answers_the_same(demo_box: SyncToolbox, prog: Program) -> None:
    exact, thin = both(demo_box, prog.code)
    deterministic = not NONDETERMINISTIC.search(prog.name + prog.code)
    assert outcome(thin, deterministic) == outcome(exact, deterministic)
    assert exact.runner == runners.SDK
    if exact.phase not in ("code", "compile"):  # a program that reads its build info gets the SDK's
        assert thin.runner == (runners.SDK if "debug." in prog.code else runners.LOOPBACK)


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_runtime_feature_answers_the_same(feature_box: SyncToolbox, name: str) -> None:
    exact, thin = both(feature_box, FEATURES[name])
    assert outcome(thin) == outcome(exact), (exact.error_text(), thin.error_text())
    expected = runners.SDK if name == "build_info" else runners.LOOPBACK
    assert (exact.runner, thin.runner) == (runners.SDK, expected)


def test_an_oversized_call_gets_the_endpoints_refusal(feature_box: SyncToolbox) -> None:
    """The one answer that is not the same each time: arguments over the endpoint's body cap are
    refused before they are read and the connection closed. A client still writing may read the
    refusal or only the connection's end (with its ports), by the timing of the moment; the
    loopback runtime reads the refusal when it came, with its reason."""
    code = 'v, err := callTool(ctx, "weather.get_weather", map[string]any{"city": strings.Repeat("x", 5<<20)})\nfmt.Println(v, err)'
    exact, thin = both(feature_box, code)
    head = re.escape('<nil> calling tool get_weather (server weather): calling "tools/call": sending "tools/call": ')
    status = r"Request Entity Too Large \(HTTP 413 Request Entity Too Large\)\n"
    answers = (
        r"the request body is \d+ bytes; at most 4194304 are accepted: rejected by transport: " + status,  # read
        status,  # the SDK's, when it read the status but not the body
        # Only the connection's end: a reset, the write refused (EPIPE) or the read ended (EOF)
        # before the refusal's bytes were read.
        r'rejected by transport: Post "http://127\.0\.0\.1:\d+/mcp": '
        r"(.*connection.*|.*write: broken pipe|EOF)\n",
    )
    for r in (exact, thin):
        assert r.ok and any(re.fullmatch(head + answer, r.output) for answer in answers), r.output


def test_the_loopback_program_links_no_sdk(module_cache, feature_box: SyncToolbox) -> None:
    pkg = feature_box.toolbox.code_mode.package
    code = ModelCode("fmt.Println(must(getCity(ctx)).City) // linked both ways")
    exact = asyncio.run(module_cache.build(pkg, code, runner=runners.SDK))
    thin = asyncio.run(module_cache.build(pkg, code, runner=runners.LOOPBACK))
    assert exact.ok and thin.ok and exact.binary != thin.binary, (exact.output, thin.output)
    assert (exact.runner, thin.runner) == (runners.SDK, runners.LOOPBACK)
    assert exact.binary is not None and thin.binary is not None
    assert thin.binary.stat().st_size < exact.binary.stat().st_size / 2
    assert b"modelcontextprotocol/go-sdk" in exact.binary.read_bytes()
    assert b"modelcontextprotocol/go-sdk" not in thin.binary.read_bytes()
    assert b"net/http.(*Transport)" in exact.binary.read_bytes()  # function names (the pclntab)
    assert b"net/http.(*Transport)" not in thin.binary.read_bytes()
    again = [asyncio.run(module_cache.build(pkg, code, runner=r)) for r in (runners.SDK, runners.LOOPBACK)]
    assert [(b.cached, b.binary) for b in again] == [(True, exact.binary), (True, thin.binary)]  # each its own
