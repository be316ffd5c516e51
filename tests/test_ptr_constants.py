"""``ptr(3)`` where a ``*float64`` is wanted: Go infers ``ptr[int]`` from the untyped constant
and the program would not compile; the type-check helper fixes such calls from the type the
value goes to (go_templates/gofix/ptrfix.go) and the program builds and runs (real Go)."""

from __future__ import annotations

import asyncio

import pytest

from gocode.codemode import CodeMode
from gocode.config import Config
from gocode.run.reach import OwnSessions
from gocode.toolset import ServerTools, ToolInfo

pytestmark = pytest.mark.go

# Optional numbers with a non-zero default are pointers: nil leaves them out.
FORECAST = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer", "default": 3},
        "scale": {"type": "number", "default": 1.5},
        "lat": {"type": "number", "default": 48.8},
    },
    "required": ["city"],
}


def _code_mode(module_cache) -> CodeMode:
    cm = CodeMode(Config.model_validate({"mcpServers": {}}), module_cache=module_cache)
    cm.use([ServerTools("weather", (ToolInfo("weather", "forecast", "Forecast.", FORECAST),))])
    return cm


def test_the_fields_are_pointers_to_every_numeric_kind(module_cache):
    view = _code_mode(module_cache).declarations()
    assert "Days  *int" in view and "Scale *float64" in view and "Lat   *float64" in view, view


@pytest.mark.parametrize(
    ("code", "output"),
    [
        # A struct literal's fields: an int where a float64 is wanted, a float where an int is.
        ('in := ForecastInput{City: "Paris", Days: ptr(2.0), Scale: ptr(2), Lat: ptr(-1)}', "2 2 -1"),
        # Assignments, a constant expression, an untyped named constant.
        (
            'const k = 4\nin := ForecastInput{City: "Paris"}\nin.Scale = ptr(1 << 2)\nin.Lat = ptr(k / 8.0)\nin.Days = ptr(k)',
            "4 4 0.5",
        ),
        # A typed var, a function's argument and its return value.
        (
            "var s *float64 = ptr(3)\nf := func(d *int, l *float64) *float64 { return ptr(7) }\n"
            'in := ForecastInput{City: "x", Days: ptr(1), Scale: s, Lat: f(ptr(1), ptr(2))}',
            "1 3 7",
        ),
    ],
    ids=["struct-literal", "assignments", "var-arg-return"],
)
def test_ptr_of_an_untyped_constant_takes_the_type_it_goes_to(module_cache, code, output):
    cm = _code_mode(module_cache)
    program = code + "\nfmt.Println(*in.Days, *in.Scale, *in.Lat)\n"
    result = asyncio.run(cm.execute(program, reach=OwnSessions({})))  # no tool is called
    assert result.ok, result.error_text()
    assert result.output == output + "\n"


def test_what_a_constant_cannot_be_is_still_the_compilers_error(module_cache):
    """ptr(2.5) for an *int is no int: the error stays the model's, at its own line."""
    cm = _code_mode(module_cache)
    result = asyncio.run(cm.execute('in := ForecastInput{City: "x", Days: ptr(2.5)}\n_ = in\n', reach=OwnSessions({})))
    assert not result.ok
    assert "model.go:1:" in result.error_text() and "ptr(2.5)" in result.error_text(), result.error_text()
    # A typed variable is not a constant: its type is the model's choice.
    typed = 'n := 3\nin := ForecastInput{City: "x", Scale: ptr(n)}\n_ = in\n'
    result = asyncio.run(cm.execute(typed, reach=OwnSessions({})))
    assert not result.ok and "*int" in result.error_text(), result.error_text()
