"""Go source from the IR, through the jinja2 templates in ``go_templates/``.

Knows the IR (:mod:`gocode.schema.ir`) and the prepared model code (:mod:`gocode.program.code`),
not JSON Schema. Templates only see values computed here, already valid Go text; the
environment is built once with ``StrictUndefined``. Output is gofmt-clean (checked by tests).
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from typing import Any

import jinja2

from gocode.paths import cache_dir, state_dir
from gocode.program.code import Prepared
from gocode.resources import templates_dir
from gocode.schema.ir import (
    MUST_HELPER,
    PTR_HELPER,
    RUNTIME_ALIASES,
    Decl,
    EnumDecl,
    Package,
    StructDecl,
    ToolFunc,
    TupleDecl,
    TypeDecl,
    UnionDecl,
)
from gocode.schema.names import IDENTIFIER, comment_literal, go_string

RT_IMPORT = "gocodews/rt"
TOOLS_IMPORT_PREFIX = "gocodews/tools/"


TEMPLATES_CACHE_DIR = "templates"  # compiled templates, under the state (or cache) directory


class _CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """Templates compiled once per machine (keyed by their source and the Python version), not
    once per process: compiling them is most of the first render of a fresh ``gocode exec``.
    One that cannot be written (a read-only cache) is only not kept."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _compiled_templates() -> jinja2.BytecodeCache | None:
    directory = (state_dir() or cache_dir()) / TEMPLATES_CACHE_DIR
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return _CompiledTemplates(str(directory))


@functools.cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        bytecode_cache=_compiled_templates(),
    )


def _decl_ctx(d: Decl) -> dict[str, Any]:
    if isinstance(d, StructDecl):
        return {"kind": "struct", "name": d.name, "doc": d.doc, "fields": d.fields, "fills": d.fills}
    if isinstance(d, EnumDecl):
        # A defined type with its constants, as a hidden alias with the guessed names is.
        return {"kind": "type", "name": d.name, "doc": d.doc, "type": d.base, "alias": False, "consts": d.values}
    if isinstance(d, UnionDecl):
        width = max(len(v.name) for v in d.variants)
        # "name" is padded for gofmt's field alignment; method bodies use the bare "field".
        variants = [
            {
                "name": v.name.ljust(width),
                "field": v.name,
                "kind": v.kind,
                "type": v.type,
                "required_literals": [go_string(r) for r in v.required],
                "consts": [(go_string(k), val) for k, val in v.consts],
            }
            for v in d.variants
        ]
        return {"kind": "union", "name": d.name, "doc": d.doc, "variants": variants, "name_literal": go_string(d.name)}
    if isinstance(d, TupleDecl):
        width = max([len(f.name) for f in d.items] + ([4] if d.rest else []))
        items = [{"name": f.name.ljust(width), "field": f.name, "type": f.type} for f in d.items]
        return {
            "kind": "tuple",
            "name": d.name,
            "doc": d.doc,
            "positions": items,
            "rest": d.rest,
            "rest_name": "Rest".ljust(width),
            "name_literal": go_string(d.name),
        }
    return {"kind": "type", "name": d.name, "doc": d.doc, "type": d.type, "alias": d.alias, "consts": d.consts}


def _func_ctx(f: ToolFunc) -> dict[str, Any]:
    exported_doc = (f.exported + f.doc[0][len(f.name) :], *f.doc[1:]) if f.doc else ()
    return {
        "name": f.name,
        "exported": f.exported,
        "doc": f.doc,
        "exported_doc": exported_doc,
        "input_type": f.input_type,
        "output_type": f.output_type,
        "structured": f.structured,
        "media": f.media,
        "inferred": f.inferred,
        "server_literal": go_string(f.server),
        "tool_literal": go_string(f.tool),
        "tool_comment": comment_literal(f.tool),
        "decls": [_decl_ctx(d) for d in f.decls],
    }


def _tidy(src: str) -> str:
    """Collapse runs of blank lines the templates leave between optional parts."""
    lines = src.split("\n")
    out: list[str] = []
    for line in lines:
        if line == "" and out and out[-1] == "":
            continue
        out.append(line)
    return "\n".join(out).strip("\n") + "\n"


def render_bindings(pkg: Package) -> str:
    """The bindings package (``package tools``) for a tool set."""
    funcs = [_func_ctx(f) for f in pkg.funcs]
    return _tidy(
        _env().get_template("bindings.go.j2").render(funcs=funcs, digest=pkg.digest[:16], uses_json=pkg.uses_json())
    )


def tools_import_path(pkg: Package) -> str:
    return TOOLS_IMPORT_PREFIX + "t" + pkg.digest[:16]


@dataclass(frozen=True)
class _Import:
    name: str | None
    path: str
    line: str | None


def _aliases(pkg: Package) -> list[tuple[str, str]]:
    """(name, declaration) of every binding main.go re-declares under the model's names."""
    aliases: list[tuple[str, str]] = []
    for f in pkg.funcs:
        for d in f.decls:
            aliases.append((d.name, f"type {d.name} = gocodetools.{d.name}"))
            if isinstance(d, (EnumDecl, TypeDecl)):
                values = d.values if isinstance(d, EnumDecl) else d.consts
                aliases.extend((v.name, f"const {v.name} = gocodetools.{v.name}") for v in values)
        aliases.append((f.name, f"var {f.name} = gocodetools.{f.exported}"))
    aliases.extend((d.split()[1], d) for d in RUNTIME_ALIASES)
    return aliases


def main_names(pkg: Package) -> list[str]:
    """The package-level names main.go declares around the model's code (they are not imports)."""
    names = [n for n, _ in _aliases(pkg)]
    if pkg.uses_ptr():
        names.append(PTR_HELPER)
    return [*names, MUST_HELPER, "Run", "main", "gocodert", "gocodetools"]


def render_main(pkg: Package, code: Prepared, filename: str = "model.go") -> str:
    """``main.go`` for one run: aliases of the bindings, the model's hoisted declarations and
    ``Run`` with the model's statements, ``//line`` directives mapping back to ``filename``."""
    imports: list[_Import] = []
    seen: set[tuple[str | None, str]] = set()

    def add(name: str | None, path: str, line: str | None = None) -> None:
        key = (name, path)
        if key not in seen:
            seen.add(key)
            imports.append(_Import(name, path, line))

    add(None, '"context"')
    for imp in code.imports:
        add(imp.name, go_string(imp.path), f"{filename}:{imp.line}" if imp.line else None)
    # Only the names the code writes: a large tool set has thousands, and every alias costs the
    # type check and the compiler of each run (47 servers: 0.8 s per build instead of 0.3 s).
    used = set(IDENTIFIER.findall(code.body)).union(*(IDENTIFIER.findall(h.text) for h in code.hoisted))
    aliases = [(name, decl) for name, decl in _aliases(pkg) if name in used and name not in code.declared]
    # The model's own must, or a tool that took the name, wins over the helper.
    must = MUST_HELPER not in code.declared and all(name != MUST_HELPER for name, _ in aliases)
    if must:
        add("gocodefmt", '"fmt"')
        add("gocodeos", '"os"')
        add("gocoderuntime", '"runtime"')
    add("gocodert", go_string(RT_IMPORT))
    if any("gocodetools." in decl for _, decl in aliases):
        add("gocodetools", go_string(tools_import_path(pkg)))

    whole = code.entry != ""
    return (
        _env()
        .get_template("main.go.j2")
        .render(
            imports=imports,
            aliases=[decl for _, decl in aliases],
            must=must,
            hoisted=[{"line": f"{filename}:{h.line}:{h.column}", "text": h.text} for h in code.hoisted],
            body=code.body,
            body_line=None if whole else f"{filename}:1:1",
            ptr=pkg.uses_ptr() and PTR_HELPER not in code.declared and PTR_HELPER,
        )
    )
