"""The model's code parsed by Go's grammar (the module cache's Go helper): hoisting, imports by
symbol, whole programs, and syntax errors at the model's positions."""

from __future__ import annotations

import asyncio

import pytest

from gocode.program.code import ModelCode, Prepared
from gocode.schema.ir import Package

pytestmark = pytest.mark.go

EMPTY = Package(funcs=())

CODE = """\
import "os"
import (
	str "strings"
	_ "embed"
)

type Pair struct {
	A, B int
}

func (p Pair) Sum() int { return p.A + p.B }

city := "x"
s := `raw {
func notADecl() {`
fmt.Println(city, json.Valid(nil), str.ToUpper(s)) // json. in a comment: fmt.x
func helper[T any](x T) T {
	return x
}
go func() { fmt.Println("}") }()
f := func(x int) int { return x }
_ = f
func() { fmt.Println("iife") }()
"""


def prepare(module_cache, code: str) -> Prepared:
    return asyncio.run(module_cache.prepare(EMPTY, ModelCode(code)))


def test_hoists_types_methods_generics_and_keeps_statements(module_cache):
    p = prepare(module_cache, CODE)
    assert not p.errors, p.errors
    assert [(i.name, i.path, i.line) for i in p.imports] == [
        ("str", "strings", 3),
        ("_", "embed", 4),
        (None, "fmt", 0),
        (None, "encoding/json", 0),
    ]
    assert [(h.line, h.column, h.text.split("\n")[0]) for h in p.hoisted] == [
        (7, 1, "type Pair struct {"),
        (11, 1, "func (p Pair) Sum() int { return p.A + p.B }"),
        (17, 1, "func helper[T any](x T) T {"),
    ]
    body = p.body.split("\n")
    assert body[12] == 'city := "x"' and "func notADecl() {`" in body[14]  # in a raw string: not a declaration
    assert body[19].startswith("go func()") and body[22] == '\tfunc() { fmt.Println("iife") }()'.strip()
    assert body[6].strip() == "" and len(body) == len(CODE.split("\n"))  # hoisted lines blank, lines kept
    assert any('"os" is imported but not used' in n for n in p.notes)


def test_const_and_type_hoisted_together_and_vars_helpers_need(module_cache):
    code = "const size = 3\ntype Grid [size]int\nvar calls int\nfunc bump() { calls++ }\nvar local = 1\nx := 2\nvar y = x\n"
    p = prepare(module_cache, code)
    assert [h.text for h in p.hoisted] == [
        "const size = 3",
        "type Grid [size]int",
        "var calls int",
        "func bump() { calls++ }",
    ]
    assert "var local = 1" in p.body and "var y = x" in p.body


@pytest.mark.parametrize(
    ("code", "path"),
    [
        ("_ = rand.IntN(3)", "math/rand/v2"),
        ("_ = rand.N(3)", "math/rand/v2"),
        ("_ = rand.Intn(3)", "math/rand"),
        ("b := []byte{0}\n_, _ = rand.Read(b)", "crypto/rand"),
        ('_ = net.ParseIP("::1")', "net"),
        ("_ = binary.BigEndian", "encoding/binary"),
        ("_ = hmac.Equal", "crypto/hmac"),
        ("_ = sha512.New", "crypto/sha512"),
        ('_ = fs.ValidPath("a")', "io/fs"),
        ("_ = utf16.Encode", "unicode/utf16"),
        ('_ = netip.MustParseAddr("::1")', "net/netip"),
        ('_ = template.New("x")', "text/template"),
        ("var g errgroup.Group\n_ = &g", "golang.org/x/sync/errgroup"),
    ],
)
def test_imports_by_symbol(module_cache, code, path):
    p = prepare(module_cache, code)
    assert [i.path for i in p.imports] == [path], p


def test_local_names_and_selectors_do_not_import(module_cache):
    p = prepare(
        module_cache,
        'type sort struct{ X int }\nx := sort{}\n_ = x.X\njson := struct{ A int }{}\n_ = json.A\n// time.Now in a comment\n_ = "os.Args"\n',
    )
    assert p.imports == () and not p.errors


def test_whole_program_with_main(module_cache):
    p = prepare(module_cache, 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n')
    assert p.entry == "main" and p.body == "gocodeModelMain()"
    assert p.hoisted[0].text.startswith("func gocodeModelMain() {")
    assert "package clause" in p.notes[0]


def test_run_func(module_cache):
    p = prepare(module_cache, "func Run(ctx context.Context) error {\n\treturn nil\n}\n")
    assert p.entry == "run" and p.body == "return gocodeModelRun(ctx)"


@pytest.mark.parametrize(
    ("code", "where", "fragment"),
    [
        ("x := {\n\n", (1, 6), "syntax error"),
        ("a := 1\n}\n", (2, 1), "unexpected }: nothing is open here"),
        ('fmt.Println("abc)\n', (1, 13), "string literal not terminated"),
        ("for {\n", (1, 5), "this { is never closed"),
        (
            'x := 1\nfmt.Println("a"\ny := 2\n',
            (2, 16),
            "unexpected newline in argument list; possibly missing comma or )",
        ),
        ("x := 1\nfunc main() {\n}\n", (2, 1), "do not declare func main"),
        ('import "github.com/pkg/errors"\n', (1, 8), "only the standard library and golang.org/x/sync/errgroup"),
    ],
)
def test_errors_at_the_models_position(module_cache, code, where, fragment):
    p = prepare(module_cache, code)
    assert p.errors, p
    e = p.errors[0]
    assert (e.file, e.line, e.column) == ("model.go", *where), e
    assert fragment in e.message


def test_a_second_event_loop_and_threads_share_the_helper(module_cache):
    async def many() -> list[Prepared]:
        return await asyncio.gather(*(module_cache.prepare(EMPTY, ModelCode(f"_ = {i}")) for i in range(8)))

    assert all(not p.errors for p in asyncio.run(many()))
    assert all(not p.errors for p in asyncio.run(many()))  # a new loop: nothing bound to the first


def test_a_helper_that_does_not_answer_in_time_is_replaced(module_cache, monkeypatch):
    from gocode.program import typecheck

    monkeypatch.setattr(typecheck, "CALL_TIMEOUT", 0.0)
    slow = "x := 1\n" + "_ = x\n" * 200_000  # milliseconds of parsing: never answered at once
    build = asyncio.run(module_cache.build(EMPTY, ModelCode(slow)))
    assert not build.ok and "took longer than" in build.output
    monkeypatch.undo()
    assert not prepare(module_cache, "x := 1\n_ = x\n").errors  # a fresh helper answers
