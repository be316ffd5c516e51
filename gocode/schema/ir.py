"""The Go intermediate representation: frozen declarations (structs, enums, unions, tuples),
tool functions and the package that holds them, built by :mod:`gocode.schema.builder`."""

from __future__ import annotations

from dataclasses import dataclass

from gocode.schema.stdlib import STDLIB

# The pointer helper the main package declares for optional fields and union alternatives.
PTR_HELPER = "ptr"
# The helper main.go declares for tool calls whose error should end the run.
MUST_HELPER = "must"
# Finding and calling tools at run time, progress and the structured result: what main.go
# declares for them (go_templates/rt/search.go, stream.go; rendered by gocode.program.render).
# Their names are taken: no tool function or type may have one.
RUNTIME_ALIASES = (
    "type ToolMatch = gocodert.ToolMatch",
    "var searchTools = gocodert.SearchTools",
    "var callTool = gocodert.CallTool",
    "type ToolProgress = gocodert.Progress",
    "var callToolStream = gocodert.CallToolStream",
    "var result = gocodert.Result",
    # A server's resources and prompts, and any tool's whole result (go_templates/rt/resources.go).
    "type ToolContent = gocodert.Content",
    "type ContentPart = gocodert.Part",
    "var callToolContent = gocodert.CallToolContent",
    "type ResourceInfo = gocodert.Resource",
    "type ResourceContents = gocodert.ResourceContents",
    "var listResources = gocodert.ListResources",
    "var readResource = gocodert.ReadResource",
    "type PromptResult = gocodert.Prompt",
    "var getPrompt = gocodert.GetPrompt",
)
RUNTIME_TYPE_NAMES = frozenset(a.split()[1] for a in RUNTIME_ALIASES if a.startswith("type "))
# Names the generated main package uses itself, plus every package name the model's code may
# have imported for it automatically; a tool function must not shadow them.
RESERVED_FUNC_NAMES = frozenset(
    {"ctx", "err", "main", "init", "Run", "gocodert", "gocodetools", "context", PTR_HELPER, MUST_HELPER, *STDLIB}
    | {a.split()[1] for a in RUNTIME_ALIASES if a.startswith("var ")}
    | {"in", "gocodeInput"}  # a saved program's input (gocode.tools.saved.with_input)
)
# A tool whose result type was learned from its results (gocode.mcp.shapes) keeps its declared
# function; its companion ``<function>_typed`` returns ``<Function>_Result``, the result decoded.
# Generated tool and type names never hold an underscore followed by a letter (names.py joins
# words, a number enum constant has ``_`` before digits only), so these never take a name a
# tool, a type or a constant has or will have.
TYPED_SUFFIX = "_typed"
TYPED_RESULT_SUFFIX = "_Result"
DESCRIPTION_LIMIT = 4000
FIELD_DOC_LIMIT = 600
# JSON kinds, as rt.Branch.Kind spells them.
SCALAR_KINDS = ("string", "integer", "number", "boolean")
KIND_GO = {"string": "string", "integer": "int", "number": "float64", "boolean": "bool"}
GO_KIND = {go: kind for kind, go in KIND_GO.items()}
KIND_FIELD = {
    "string": "String",
    "integer": "Int",
    "number": "Float",
    "boolean": "Bool",
    "array": "List",
    "object": "Object",
}
STRUCTURAL_KEYS = frozenset(
    "type properties items prefixItems additionalProperties patternProperties enum const $ref anyOf oneOf allOf".split()
)


@dataclass(frozen=True)
class Source:
    """Where a declaration comes from, for messages and warnings."""

    server: str
    tool: str
    pointer: str = ""

    def __str__(self) -> str:
        where = f"{self.server}.{self.tool}"
        return f"{where} at {self.pointer}" if self.pointer else where


@dataclass(frozen=True)
class Field:
    """A struct field. ``optional`` fields are tagged ``omitzero``; ``fill`` is a Go literal
    the bindings send when a required field is left at its zero value (a ``const``)."""

    name: str
    json_name: str
    type: str
    doc: tuple[str, ...]
    optional: bool
    fill: tuple[str, str] | None = None  # (zero literal, value literal)
    # For the model view: the description (or title) on one line, empty when it only restates
    # the name; and the notes (default, format, bounds, "One of …") shown after it.
    desc: str = ""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class StructDecl:
    name: str
    doc: tuple[str, ...]
    fields: tuple[Field, ...]
    source: Source

    @property
    def fills(self) -> tuple[tuple[Field, str, str], ...]:
        """(field, zero test, value) for what MarshalJSON fills in: required slices and maps go
        out as ``[]``/``{}`` when nil, never ``null`` (servers validate required arrays); a
        required ``const`` left empty goes out as its value."""
        out: list[tuple[Field, str, str]] = []
        for f in self.fields:
            if f.optional:
                continue
            if f.type.startswith(("[]", "map[")):
                out.append((f, "nil", f.type + "{}"))
            elif f.fill is not None:
                out.append((f, *f.fill))
        return tuple(out)


@dataclass(frozen=True)
class EnumValue:
    name: str
    literal: str


@dataclass(frozen=True)
class EnumDecl:
    name: str
    doc: tuple[str, ...]
    base: str
    values: tuple[EnumValue, ...]
    source: Source


@dataclass(frozen=True)
class TypeDecl:
    """``type Name <type>``: a defined type for a non-struct schema (map, slice, basic)."""

    name: str
    doc: tuple[str, ...]
    type: str
    source: Source
    # Declared for the program only, not shown to the model: a name a program may guess (a
    # tool's own Input/Output name, a field's type named for the field) kept as an alias of the
    # type declared under another name, with an enum's constants under the guessed name.
    hidden: bool = False
    consts: tuple[EnumValue, ...] = ()

    @property
    def alias(self) -> bool:
        """A second name for another declared type (``type A = B``), so B's methods stay."""
        return (self.type[:1].isupper() and self.type.isidentifier()) or self.type.startswith("gocodert.")


@dataclass(frozen=True)
class Variant:
    """One alternative of a union: a field ``name`` of ``type`` (a pointer, slice or map, so
    nil means "not this one"), chosen when decoding a JSON value of ``kind`` that has every
    ``required`` key and the ``consts`` (key → JSON literal, as a Go string literal)."""

    name: str
    type: str
    kind: str
    required: tuple[str, ...] = ()
    consts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class UnionDecl:
    name: str
    doc: tuple[str, ...]
    variants: tuple[Variant, ...]
    source: Source


@dataclass(frozen=True)
class TupleDecl:
    """A JSON array with a type per position: fields ``Item0``…, then ``Rest`` if more may follow."""

    name: str
    doc: tuple[str, ...]
    items: tuple[Field, ...]
    rest: str | None
    source: Source


Decl = StructDecl | EnumDecl | TypeDecl | UnionDecl | TupleDecl


@dataclass(frozen=True)
class ToolFunc:
    """One tool as a Go function: ``name`` is what the model calls, ``exported`` its twin in the
    bindings package. ``input_type`` is None for a tool without input properties; ``structured``
    is False for a tool without ``outputSchema``, which returns its text as a ``string``."""

    name: str
    exported: str
    server: str
    tool: str
    doc: tuple[str, ...]
    input_type: str | None
    output_type: str
    structured: bool
    decls: tuple[Decl, ...]
    # A tool that returns images, audio or other non-text parts: output_type is MEDIA_TYPE.
    media: bool = False
    # The output type was inferred from the tool's results, not declared (structured is True).
    inferred: bool = False
    # The typed companion of the tool's own function (see TYPED_SUFFIX), which keeps its
    # declared signature: this one returns the result decoded as the type learned from it.
    companion: bool = False


@dataclass(frozen=True)
class Package:
    """The Go view of a tool set: per tool its declarations and function, in a stable order."""

    funcs: tuple[ToolFunc, ...]
    warnings: tuple[str, ...] = ()
    digest: str = ""

    @property
    def decls(self) -> tuple[Decl, ...]:
        return tuple(d for f in self.funcs for d in f.decls)

    @property
    def tool_funcs(self) -> tuple[ToolFunc, ...]:
        """One function per tool: the typed companions left out."""
        return tuple(f for f in self.funcs if not f.companion)

    def companion_of(self, f: ToolFunc) -> ToolFunc | None:
        """The typed companion of a tool's function, once its result type was learned."""
        known = self.__dict__.get("_companions")
        if known is None:  # asked once per tool shown: found in one pass, then kept
            known = {(c.server, c.tool): c for c in self.funcs if c.companion}
            object.__setattr__(self, "_companions", known)
        return None if f.companion else known.get((f.server, f.tool))

    def uses_json(self) -> bool:
        """Whether the bindings need encoding/json (a struct with a MarshalJSON method)."""
        return any(isinstance(d, StructDecl) and d.fills for d in self.decls)

    def uses_ptr(self) -> bool:
        """Whether a declaration has a pointer the model fills in (so ``ptr`` is offered)."""
        for d in self.decls:
            if isinstance(d, UnionDecl):
                return True
            if isinstance(d, StructDecl) and any(f.type.startswith("*") for f in d.fields):
                return True
        return False


# --- building ---------------------------------------------------------------------------------
