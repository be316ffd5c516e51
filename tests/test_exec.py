"""execute_go_code end to end against the bundled demo server: real builds, real transports (needs Go)."""

from __future__ import annotations

import asyncio
import sys
import time
import uuid

import pytest

from gocode.codemode import CodeMode
from tests.conftest import ROOT, code_mode, config_from, demo_stdio, run, wait_gone

pytestmark = pytest.mark.go

WEATHER = """\
city, err := getCity(ctx)
if err != nil {
	return err
}
w, err := getWeather(ctx, GetWeatherInput{City: city.City, Unit: UnitFahrenheit})
if err != nil {
	return err
}
fmt.Printf("%s %.1f %s %s\\n", city.City, w.Temperature, w.Unit, w.Conditions)
"""


def test_structured_output_over_stdio(demo_cm):
    r = run(demo_cm, WEATHER)
    assert r.ok, r.error_text()
    assert r.output == "Paris 65.3 fahrenheit sunny\n"
    assert r.phase == "ok" and r.exit_code == 0


def test_streamable_http(module_cache, demo_http_url):
    cm = code_mode(config_from({"weather": {"type": "http", "url": demo_http_url}}), module_cache)
    r = run(cm, WEATHER)
    assert r.ok, r.error_text()
    assert r.output == "Paris 65.3 fahrenheit sunny\n"


def test_sse(module_cache, demo_sse_url):
    cm = code_mode(config_from({"weather": {"type": "sse", "url": demo_sse_url}}), module_cache)
    r = run(cm, WEATHER)
    assert r.ok, r.error_text()
    assert r.output == "Paris 65.3 fahrenheit sunny\n"


def test_tool_error_is_a_go_error(demo_cm):
    code = """\
_, err := getWeather(ctx, GetWeatherInput{City: "Atlantis"})
var te *gocodert.ToolError
fmt.Println("tool error:", errors.As(err, &te), err)
_, err = getWeather(ctx, GetWeatherInput{City: "Atlantis"})
return err
"""
    r = run(demo_cm, code)
    assert not r.ok and r.phase == "runtime" and r.exit_code == 1
    assert r.output.startswith("tool error: true tool get_weather (server weather) failed:")
    assert "unknown city 'Atlantis'" in r.stderr
    assert "stdout before the failure:\ntool error: true" in r.error_text()


def test_compile_error_points_at_the_models_line(demo_cm):
    code = 'fmt.Println("first line is fine")\n\nx := undefinedThing + 1\nfmt.Println(x)\n'
    r = run(demo_cm, code)
    assert r.phase == "compile" and not r.ok
    assert "model.go:3:6: undefined: undefinedThing" in r.stderr, r.stderr
    assert [(d.file, d.line, d.column) for d in r.diagnostics] == [("model.go", 3, 6)]
    assert "gocodews" not in r.stderr and "runs/" not in r.stderr


def test_compile_error_in_hoisted_function_and_type_mismatch(demo_cm):
    code = 'import "strings"\n\nfunc shout(s string) string {\n\treturn strings.ToUpper(s) + 1\n}\n\nfmt.Println(shout("x"))\n'
    r = run(demo_cm, code)
    assert r.phase == "compile"
    assert r.diagnostics and r.diagnostics[0].line == 4, r.stderr


def test_code_that_cannot_be_placed(demo_cm):
    r = run(demo_cm, "for {\n")
    assert r.phase == "compile" and "model.go:1:5: syntax error: this { is never closed" in r.stderr


def test_runtime_error_and_panic(demo_cm):
    r = run(demo_cm, 'fmt.Println("partial")\nreturn fmt.Errorf("boom %d", 42)\n')
    assert (r.phase, r.exit_code, r.output) == ("runtime", 1, "partial\n")
    assert "error: boom 42" in r.stderr
    r = run(demo_cm, 'var m map[string]int\nm["x"] = 1\n')
    assert r.phase == "runtime" and r.exit_code == 2
    assert "panic: assignment to entry in nil map" in r.stderr and "model.go:2" in r.stderr
    # The traceback shows the model's frames only, not the generated main or the runtime.
    assert "gocode_main.go" not in r.stderr and "rt.go" not in r.stderr and "gocodews" not in r.stderr
    # A panic in a goroutine the model started: its frames and where it was started stay.
    r = run(demo_cm, "done := make(chan bool)\ngo func() {\n\tvar p *int\n\t*p = 1\n\tdone <- true\n}()\n<-done\n")
    assert r.phase == "runtime" and "nil pointer dereference" in r.stderr, r.stderr
    assert "model.go:4" in r.stderr and "created by main.Run" in r.stderr and "model.go:2" in r.stderr, r.stderr


def test_hoisting_imports_goroutines_and_helpers(demo_cm):
    code = """\
import "sync"

type result struct {
	city string
	temp float64
}

func fetch(ctx context.Context, city string) (result, error) {
	w, err := getWeather(ctx, GetWeatherInput{City: city})
	return result{city, w.Temperature}, err
}

cities := []string{"Paris", "Tokyo", "Oslo", "Nairobi", "New York", "Paris", "Tokyo", "Oslo"}
results := make([]result, len(cities))
var wg sync.WaitGroup
for i, c := range cities {
	wg.Add(1)
	go func() {
		defer wg.Done()
		r, err := fetch(ctx, c)
		if err != nil {
			panic(err)
		}
		results[i] = r
	}()
}
wg.Wait()
sort.Slice(results, func(a, b int) bool { return results[a].city < results[b].city })
for _, r := range results {
	fmt.Printf("%s=%.1f ", r.city, r.temp)
}
fmt.Println(strings.Repeat("!", 2))
"""
    r = run(demo_cm, code)
    assert r.ok, r.error_text()
    assert r.output == "Nairobi=24.5 New York=15.0 Oslo=4.0 Oslo=4.0 Paris=18.5 Paris=18.5 Tokyo=22.0 Tokyo=22.0 !!\n"


def test_timeout_kills_the_program_and_its_servers(module_cache):
    marker = f"GOCODE_TEST_{uuid.uuid4().hex}"
    server = {**demo_stdio(), "env": {marker: "1"}}
    # 10 s: the program starts the demo server itself (a Python start-up that takes seconds on a
    # loaded 2-core machine) before it prints, and only then sleeps past the limit.
    cm = code_mode(config_from({"weather": server}, defaults={"codeMode": {"timeout": 10}}), module_cache)
    code = "c, err := getCity(ctx)\nif err != nil {\n\treturn err\n}\nfmt.Println(c.City)\ntime.Sleep(time.Hour)\n"
    start = time.monotonic()
    r = run(cm, code)
    assert r.phase == "timeout" and not r.ok
    assert time.monotonic() - start < 60  # the hour-long sleep is what it must not wait for
    assert r.output == "Paris\n"  # what was printed before the timeout comes back
    assert "did not finish within 10 s" in r.stderr
    assert wait_gone(marker) == []


def test_normal_exit_leaves_no_server_behind(module_cache):
    marker = f"GOCODE_TEST_{uuid.uuid4().hex}"
    cm = code_mode(config_from({"weather": {**demo_stdio(), "env": {marker: "1"}}}), module_cache)
    r = run(cm, WEATHER)
    assert r.ok, r.error_text()
    assert wait_gone(marker) == []


def test_two_runs_at_the_same_time(demo_cm: CodeMode):
    async def both():
        return await asyncio.gather(
            demo_cm.execute('c, _ := getCity(ctx)\nfmt.Println("one", c.City)\n'),
            demo_cm.execute('w, err := getWeather(ctx, GetWeatherInput{City: "Oslo"})\nif err != nil {\n\treturn err\n}\nfmt.Println("two", w.Temperature)\n'),
        )  # fmt: skip

    one, two = asyncio.run(both())
    assert (one.output, two.output) == ("one Paris\n", "two 4\n"), (one.error_text(), two.error_text())


def test_output_is_capped(module_cache):
    # Without a workspace to keep it in, output past the cap is cut (tests/test_workspace.py: kept).
    settings = {"maxOutputBytes": 1000, "workspace": {"enabled": False}}
    cm = code_mode(config_from({"weather": demo_stdio()}, defaults={"codeMode": settings}), module_cache)
    r = run(cm, 'fmt.Print(strings.Repeat("x", 5000))\n')
    assert r.ok and r.truncated
    assert r.output.startswith("x" * 1000 + "\n[output truncated: 4000 more bytes beyond the 1000-byte limit]")


def test_same_code_reuses_the_binary(demo_cm):
    code = f'fmt.Println("{uuid.uuid4().hex}")\n'
    first, second = run(demo_cm, code), run(demo_cm, code)
    assert first.ok and second.ok and not first.cached_binary and second.cached_binary
    assert first.output == second.output


def test_whole_program_with_main(demo_cm):
    r = run(demo_cm, 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("from main")\n}\n')
    assert r.ok and r.output == "from main\n", r.error_text()


@pytest.mark.parametrize(
    "code",
    [
        'fmt.Println(strings.ToUpper("same"))\n',
        "x := 1\n",  # a compile error in the model's code
        'import "github.com/nowhere/pkg"\npkg.Do()\n',  # a package outside the module
        'var b bytes.Buffer\nb.WriteString("ok")\nreturn errors.New(b.String())\n',
    ],
)
def test_direct_and_go_build_give_the_same_answers(module_cache, demo_cm, code):
    """The direct compile-and-link path and `go build` agree on output and on every message."""
    from gocode.compile.modcache import ModuleCache
    from gocode.program.code import ModelCode

    direct = ModuleCache(module_cache.toolchain, module_cache.cache, direct=True)
    gobuild = ModuleCache(module_cache.toolchain, module_cache.cache, direct=False)
    tag = f"// {uuid.uuid4().hex}\n"  # a fresh binary each time, never the cached one
    results = []
    for ws in (direct, gobuild):
        cm = CodeMode(demo_cm.config, module_cache=ws)
        cm.use(demo_cm.discovery.servers)
        results.append(run(cm, tag + code))
        tag = f"// {uuid.uuid4().hex}\n"
    a, b = results
    assert (a.ok, a.phase, a.output, a.stderr, a.exit_code) == (b.ok, b.phase, b.output, b.stderr, b.exit_code)
    # A package outside the standard library is refused before any build, on both paths.
    assert b.build_mode == ("checked" if "github.com" in code else "go build")
    # A compile error is answered by the type check, before any compiler runs.
    assert a.build_mode == ("direct" if a.phase != "compile" else "checked")
    asyncio.run(direct.build(cm.package, ModelCode("")))  # and the direct path keeps working after a failure


def people_stdio() -> dict:
    return {"command": sys.executable, "args": [str(ROOT / "tests" / "servers" / "people_server.py")]}


@pytest.fixture(scope="module")
def people_cm(module_cache) -> CodeMode:
    return code_mode(config_from({"people": people_stdio()}), module_cache)


@pytest.mark.parametrize(
    ("code", "line", "tool"),
    [
        # The error ignored: the result is the zero value, whose pointer fields are nil.
        ('p, _ := findPerson(ctx, FindPersonInput{Name: "Nobody"})\nfmt.Println(p.Manager.Manager.Name)\n', 2,
         "findPerson (people.find_person)"),
        # No error, but an optional field the tool left out, through must and a range loop.
        ('all := must(listPeople(ctx))\nfor _, who := range all.People {\n\tboss := who.Manager\n'
         '\tfmt.Println(who.Name, "reports to", boss.Name)\n}\n', 4, "listPeople (people.list_people)"),
        ('fmt.Println(must(findPerson(ctx, FindPersonInput{Name: "Ada"})).Manager.Manager.Name)\n', 1,
         "findPerson (people.find_person)"),
    ],
)  # fmt: skip
def test_a_nil_dereference_of_a_tool_result_names_the_tool(people_cm, code, line, tool):
    r = run(people_cm, code)
    assert r.phase == "runtime" and "nil pointer dereference" in r.stderr, r.error_text()
    assert f"model.go:{line}" in r.stderr, r.stderr
    assert f"model.go:{line} dereferenced a nil pointer in the result of {tool}" in r.stderr, r.stderr


def test_a_nil_dereference_of_the_models_own_pointer_names_no_tool(people_cm):
    r = run(people_cm, 'p := must(findPerson(ctx, FindPersonInput{Name: "Grace"}))\nvar q *Person\n'
            "fmt.Println(p.Manager.Name, q.Name)\n")  # fmt: skip
    assert r.phase == "runtime" and "nil pointer dereference" in r.stderr, r.error_text()
    assert "model.go:3" in r.stderr and "result of" not in r.stderr, r.stderr
