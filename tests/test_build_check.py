"""One build per answer: the type check answers compile errors before any compiler runs, and
export data gone from the build cache falls back to `go build` once, counted (needs Go)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from pathlib import Path

import pytest

from gocode.compile.modcache import ModuleCache
from gocode.compile.runners import SDK
from gocode.program.code import ModelCode
from gocode.program.render import tools_import_path
from gocode.schema.builder import build_package
from gocode.toolset import ToolInfo
from tests.schemas import CPE_WEATHER, toolset

pytestmark = pytest.mark.go


def _fresh_package():
    # A description of its own gives the tool set a digest (and bindings) no other test shares.
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    return build_package(toolset([ToolInfo("weather", "get_weather", f"weather {uuid.uuid4().hex}", schema, None)]))


def test_a_compile_error_is_answered_by_the_check_alone(module_cache):
    ws = ModuleCache(module_cache.toolchain, module_cache.cache, direct=True)
    pkg = build_package(toolset(CPE_WEATHER))
    r = asyncio.run(ws.build(pkg, ModelCode(f"// {uuid.uuid4().hex}\nx := 1\n")))
    assert (r.ok, r.mode, r.output) == (False, "checked", "model.go:2:1: declared and not used: x")
    assert ws.fallbacks == 0


def test_export_data_gone_falls_back_to_go_build_once_and_counts_it(module_cache, tmp_path):
    ws = ModuleCache(module_cache.toolchain, module_cache.cache, direct=True)
    pkg = _fresh_package()
    ws.ensure_bindings(pkg)
    real = asyncio.run(ws.direct_config(pkg))
    assert real is not None
    path = tools_import_path(pkg)
    lines = real.importcfg.read_text().splitlines(keepends=True)
    broken = tmp_path / "importcfg"
    broken.write_text(
        "".join(
            f"packagefile {path}={tmp_path}/gone.a\n" if ln.startswith(f"packagefile {path}=") else ln for ln in lines
        )
    )
    ws._direct[(path, SDK)] = dataclasses.replace(real, importcfg=broken)  # as if the build cache was trimmed
    uses_tools = "fmt.Println(getWeather != nil)\n"  # a program that names no tool does not import them
    r = asyncio.run(ws.build(pkg, ModelCode(f"// {uuid.uuid4().hex}\n{uses_tools}")))
    assert (r.ok, r.mode, ws.fallbacks) == (True, "go build (fallback)", 1), r.output
    r = asyncio.run(ws.build(pkg, ModelCode(f"// {uuid.uuid4().hex}\n{uses_tools}")))
    assert (r.ok, r.mode, ws.fallbacks) == (True, "direct", 1), r.output


def test_a_saved_importcfg_of_other_bindings_is_not_reused(module_cache, tmp_path):
    # Another gocode version rendered the same tool set (same import path) differently and saved
    # its importcfg: the export data listed for that source must not answer for this one.
    pkg = _fresh_package()
    ws = ModuleCache(module_cache.toolchain, module_cache.cache, direct=True)
    assert asyncio.run(ws.direct_config(pkg)) is not None
    saved = ws.dir / tools_import_path(pkg).removeprefix("gocodews/") / "direct.json"
    doc = json.loads(saved.read_text())
    assert "bindings" in doc
    old_cfg = tmp_path / "importcfg"
    old_cfg.write_text(
        "".join(line + "\n" for line in Path(doc["importcfg"]).read_text().splitlines() if "/tools/" not in line)
    )
    del doc["bindings"]
    saved.write_text(json.dumps(doc | {"importcfg": str(old_cfg)}))
    later = ModuleCache(module_cache.toolchain, module_cache.cache, direct=True)  # the next process
    r = asyncio.run(later.build(pkg, ModelCode(f"// {uuid.uuid4().hex}\nfmt.Println(getWeather != nil)\n")))
    assert (r.ok, r.mode, later.fallbacks) == (True, "direct", 0), r.output


def _check(module_cache, body: str, tools: list[ToolInfo] = CPE_WEATHER):
    ws = ModuleCache(module_cache.toolchain, module_cache.cache, direct=True)
    pkg = build_package(toolset(tools))
    return asyncio.run(ws.build(pkg, ModelCode(f"// {uuid.uuid4().hex}\n{body}")))


def test_a_made_up_enum_literal_is_a_compile_error_naming_the_values(module_cache):
    r = _check(module_cache, 'in := GetWeatherInput{Unit: "kelvin"}\nfmt.Println(in)\n')
    assert (r.ok, r.mode) == (False, "checked")
    first, rest = r.output.split("\n", 1)
    assert first == 'model.go:2:29: "kelvin" is not a value of GetWeatherInputUnit: use one of "celsius", "fahrenheit"'
    assert 'type GetWeatherInputUnit string // "celsius", "fahrenheit"' in rest  # the declaration involved
    for body in (
        'var u GetWeatherInputUnit\nu = "kelvn"\nfmt.Println(u)\n',
        'fmt.Println(GetWeatherInputUnit("kelvin"))\n',
        'us := []GetWeatherInputUnit{"celsius", "rankine"}\nfmt.Println(us)\n',
    ):
        r = _check(module_cache, body)
        assert not r.ok and "is not a value of GetWeatherInputUnit" in r.output, (body, r.output)
        assert r.output.count("is not a value of GetWeatherInputUnit") == 1, r.output  # once per value


def test_enum_values_the_zero_value_comparisons_and_other_types_compile(module_cache):
    body = (
        'a := GetWeatherInput{Unit: "celsius"}\n'
        "b := GetWeatherInput{Unit: GetWeatherInputUnitFahrenheit}\n"
        'c := GetWeatherInput{Unit: ""}\n'
        'if a.Unit == "kelvin" || b.Unit != "" {\n\tfmt.Println("cmp")\n}\n'
        "fmt.Println(a, b, c, time.Month(13))\n"
    )
    r = _check(module_cache, body)
    assert (r.ok, r.mode) == (True, "direct"), r.output


def test_values_compared_or_looked_up_are_not_values_given(module_cache):
    """Only a value the code gives is checked: comparing with (or looking for) a value the
    schema does not list is ordinary Go, as is building a valid value from parts."""
    body = (
        'in := GetWeatherInput{Unit: "celsius"}\n'
        'if in.Unit == GetWeatherInputUnit("C") || GetWeatherInputUnit("kelvin") != in.Unit {\n\tfmt.Println("cmp")\n}\n'
        "switch in.Unit {\n"
        'case GetWeatherInputUnit("C"), "F":\n\tfmt.Println("short")\n}\n'
        'allowed := []GetWeatherInputUnit{"celsius"}\n'
        'fmt.Println(slices.Contains(allowed, "kelvin"), slices.Index(allowed, "K"))\n'
        'whole := GetWeatherInput{Unit: GetWeatherInputUnit("fahr") + "enheit"}\n'
        "fmt.Println(whole)\n"
    )
    r = _check(module_cache, body)
    assert (r.ok, r.mode) == (True, "direct"), r.output


def test_a_made_up_value_is_caught_wherever_it_is_given_and_reported_once(module_cache):
    for body, where in (
        ('names := map[GetWeatherInputUnit]string{"kelvin": "K"}\nfmt.Println(names)\n', "model.go:2:41"),
        ('ch := make(chan GetWeatherInputUnit, 1)\nch <- "kelvin"\nfmt.Println(<-ch)\n', "model.go:3:7"),
        (
            'const bad GetWeatherInputUnit = "kelvin"\n'
            "a, b := GetWeatherInput{Unit: bad}, []GetWeatherInputUnit{bad}\nfmt.Println(a, b, bad)\n",
            "model.go:2:33",
        ),
    ):
        r = _check(module_cache, body)
        assert not r.ok, (body, r.output)
        assert r.output.count("is not a value of GetWeatherInputUnit") == 1, r.output
        assert r.output.startswith(where + ': "kelvin" is not a value of'), r.output


def test_numbers_are_named_as_written_and_values_in_the_schema_order(module_cache):
    schema = {
        "type": "object",
        "properties": {
            "ratio": {"type": "number", "enum": [0.5, 2, 1.5]},
            "role": {"type": "string", "enum": ["read-only", "ADMIN", "Read Write"]},
        },
    }
    tools = [ToolInfo("m", "scale", f"scale {uuid.uuid4().hex}", schema, None)]
    r = _check(module_cache, 'fmt.Println(ScaleInput{Ratio: 0.25, Role: "admin"})\n', tools)
    assert r.output.splitlines()[:2] == [
        "model.go:2:31: 0.25 is not a value of ScaleInputRatio: use one of 0.5, 2, 1.5",
        'model.go:2:43: "admin" is not a value of ScaleInputRole: use one of "read-only", "ADMIN", "Read Write"',
    ], r.output


def test_a_type_named_for_another_field_compiles_under_the_name_a_program_guesses(module_cache):
    """Shared shapes are declared once, named for the first field that had them, and $defs
    types keep their own names; ``<Struct><Field>`` and its constants still compile."""
    order = {"type": "string", "enum": ["asc", "desc"]}
    unit = {"$defs": {"Unit": {"type": "string", "enum": ["celsius", "kelvin"]}}}
    tools = [
        ToolInfo(
            "a", "list_pulls", f"pulls {uuid.uuid4().hex}", {"type": "object", "properties": {"direction": order}}
        ),
        ToolInfo("b", "list_merges", "merges", {"type": "object", "properties": {"sort": order}}),
        ToolInfo(
            "b", "temp", "temp", {**unit, "type": "object", "properties": {"unit": {"$ref": "#/$defs/Unit"}}}, None
        ),
    ]
    body = (
        'a := ListMergesInput{Sort: ListMergesInputSortDesc}\nb := ListMergesInputSort("asc")\n'
        "c := TempInput{Unit: TempInputUnitKelvin}\nfmt.Println(a, b, c)\n"
    )
    r = _check(module_cache, body, tools)
    assert (r.ok, r.mode) == (True, "direct"), r.output
    # The values are still checked, and listed once.
    r = _check(module_cache, 'fmt.Println(ListMergesInputSort("up"))\n', tools)
    assert r.output.startswith(
        'model.go:2:13: "up" is not a value of ListPullsInputDirection: use one of "asc", "desc"\n'
    )


def test_a_made_up_value_is_reported_with_the_other_errors_of_the_program(module_cache):
    r = _check(module_cache, 'in := GetWeatherInput{Unit: "kelvin"}\nfmt.Println(in.Units)\n')
    lines = r.output.split("\n\n", 1)[0].splitlines()
    assert lines == [
        'model.go:2:29: "kelvin" is not a value of GetWeatherInputUnit: use one of "celsius", "fahrenheit"',
        "model.go:3:16: in.Units undefined (type GetWeatherInput has no field or method Units)",
    ], r.output
