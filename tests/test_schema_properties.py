"""Property tests: randomly generated JSON Schemas (unions, refs, recursion, tuples, enums,
hostile names and text) always give Go that renders deterministically and compiles.

The pure part runs many examples without Go; the compile part batches a few hundred random
tools into one package so that a single ``go build`` and ``go vet`` check them all.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gocode.program.render import render_bindings
from gocode.schema.builder import build_package
from gocode.toolset import ServerTools, ToolInfo, ToolSet
from gocode.view.modelview import render_full
from tests.conftest import assert_go_package_clean

DEF_NAMES = ["Node", "Item", "type", "Run", "A b"]
# Names and text: ASCII identifiers, Go keywords, digits, case twins and arbitrary Unicode.
names = st.one_of(
    st.sampled_from(["type", "Type", "func", "map", "2fa", "naïve", "天气", "x-y", "_", "", "ctx", "ptr", "ID", "id"]),
    st.text(min_size=1, max_size=12),
)
texts = st.text(max_size=40)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=False, allow_infinity=False), texts
)


def _leaf() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from([{"type": t} for t in ("string", "integer", "number", "boolean", "null", "object", "array")]),
        st.sampled_from([{}, True, False, {"type": "decimal"}, {"$ref": "#/$defs/Missing"}, {"$ref": "http://x/y"}]),
        st.builds(lambda v: {"enum": v}, st.lists(scalars, min_size=1, max_size=5)),
        st.builds(lambda v: {"enum": v, "type": "string"}, st.lists(texts, min_size=1, max_size=5)),
        st.builds(lambda v: {"const": v}, scalars),
        st.builds(lambda n: {"$ref": f"#/$defs/{n}"}, st.sampled_from(DEF_NAMES)),
        st.builds(
            lambda d, dflt, f: {"type": "string", "description": d, "default": dflt, "format": f},
            texts,
            scalars,
            texts,
        ),
        st.builds(lambda dflt: {"type": "integer", "default": dflt}, scalars),
    )


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    props = st.dictionaries(names, children, max_size=5)
    return st.one_of(
        st.builds(
            lambda p, req, d: {"type": "object", "properties": p, "required": req, "description": d},
            props,
            st.lists(names, max_size=3),
            texts,
        ),
        st.builds(lambda c: {"type": "array", "items": c}, children),
        st.builds(lambda cs: {"type": "array", "prefixItems": cs}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda cs: {"anyOf": cs}, st.lists(children, min_size=1, max_size=4)),
        st.builds(lambda cs: {"oneOf": [*cs, {"type": "null"}]}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda cs: {"allOf": cs}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda c: {"type": "object", "additionalProperties": c}, children),
        st.builds(lambda c: {"type": "object", "patternProperties": {"^a": c}}, children),
        st.builds(
            lambda ts: {"type": ts},
            st.lists(st.sampled_from(["string", "integer", "null", "array", "object"]), min_size=1, max_size=3),
        ),
    )


schemas = st.recursive(_leaf(), _extend, max_leaves=12)


@st.composite
def tools(draw: st.DrawFn, index: int = 0) -> ToolInfo:
    defs = draw(st.dictionaries(st.sampled_from(DEF_NAMES), schemas, max_size=3))
    props = draw(st.dictionaries(names, schemas, min_size=0, max_size=5))
    required = draw(st.lists(names, max_size=3))
    input_schema = {"type": "object", "properties": props, "required": required, "$defs": defs}
    output = draw(st.one_of(st.none(), schemas))
    server = draw(st.sampled_from(["s1", "s2"]))
    return ToolInfo(server, draw(names), draw(texts), input_schema, output if isinstance(output, dict) else None)


def toolset(batch: list[ToolInfo]) -> ToolSet:
    by_server: dict[str, list[ToolInfo]] = {}
    for t in batch:
        by_server.setdefault(t.server, []).append(t)
    return ToolSet(tuple(ServerTools(s, tuple(ts)) for s, ts in sorted(by_server.items())))


@pytest.mark.fast
# As many examples as the profile says (tests/conftest.py): 300, or 60 in `make test-fast`.
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(tools(), min_size=1, max_size=4))
def test_random_schemas_render_deterministically(batch: list[ToolInfo]):
    batch = list({(t.server, t.name): t for t in batch}.values())  # a server's tool names are unique
    ts = toolset(batch)
    first = build_package(ts)
    assert render_bindings(first) == render_bindings(build_package(toolset(list(reversed(batch)))))
    decls = render_full(first)
    assert "\x00" not in decls and "\u2028" not in decls


@pytest.mark.go
def test_random_schemas_compile(module_cache, tmp_path):
    collected: list[ToolInfo] = []

    @settings(max_examples=60, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(st.lists(tools(), min_size=5, max_size=5))
    def collect(batch: list[ToolInfo]) -> None:
        collected.extend(batch)

    collect()
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(collected):  # unique per server, still clashing across servers and cases
        if (t.server, t.name) in seen:
            collected[i] = t = ToolInfo(t.server, f"{t.name}{i}", t.description, t.input_schema, t.output_schema)
        seen.add((t.server, t.name))
    assert len(collected) >= 250
    pkg = build_package(toolset(collected))
    assert_go_package_clean(module_cache, pkg, tmp_path)
    print(f"random schemas compiled: {len(collected)} tools, {len(pkg.decls)} declarations")
