"""Splitting the model's code into imports, hoisted declarations and Run's body (pure, no Go)."""

from __future__ import annotations

import pytest

from gocode.errors import CodeError
from gocode.modelcode import split_code

pytestmark = pytest.mark.fast

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

city, err := getCity(ctx)
if err != nil {
	return err
}
s := `raw {
func notADecl() {`
fmt.Println(city, json.Valid(nil), str.ToUpper(s), os.Args) // json. in a comment: fmt.x
func helper[T any](x T) T {
	return x
}
go func() { fmt.Println("}") }()
f := func(x int) int { return x }
_ = f
"""


def test_split_hoists_imports_types_and_funcs():
    sc = split_code(CODE)
    assert [(i.name, i.path, i.line) for i in sc.imports] == [(None, "os", 1), ("str", "strings", 3), ("_", "embed", 4)]
    assert [(h.line, h.text.split("\n")[0]) for h in sc.hoisted] == [
        (7, "type Pair struct {"),
        (11, "func (p Pair) Sum() int { return p.A + p.B }"),
        (20, "func helper[T any](x T) T {"),
    ]
    assert [c.line for c in sc.body] == [13, 23]
    assert "func notADecl() {`" in sc.body[0].text  # inside a raw string: not a declaration
    assert sc.body[1].text.startswith("go func()")
    # fmt and json are used but not imported; os and strings (as str) are imported by the code.
    assert sc.auto_imports == ("encoding/json", "fmt")
    assert sc.guards == ("var _ = json.Marshal", "var _ = fmt.Sprint")


def test_local_names_and_selectors_do_not_import():
    sc = split_code(
        'type sort struct{}\nx := sort{}\n_ = x\nv := a.strings.b\n_ = v\n// time.Now in a comment\n_ = "os.Args"\n'
    )
    assert sc.auto_imports == ()


def test_whole_program_with_main_is_accepted():
    sc = split_code('package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n')
    assert sc.body[0].text == "gocodeModelMain()"
    assert sc.hoisted[0].text.startswith("func gocodeModelMain() {")
    assert "package clause" in sc.notes[0]


def test_run_func_is_accepted():
    sc = split_code("func Run(ctx context.Context) error {\n\treturn nil\n}\n")
    assert sc.body[0].text == "return gocodeModelRun(ctx)"


@pytest.mark.parametrize(
    ("code", "line", "fragment"),
    [
        ("x := {\n\n", 1, "'{' is never closed"),
        ("a := 1\n}\n", 2, "unexpected '}'"),
        ('fmt.Println("abc)\n', 1, "string is not closed"),
        ("s := `abc\n", 1, "raw string"),
        ("/* open\n", 1, "comment is never closed"),
        ("x := 1\nfunc main() {\n}\n", 2, "do not declare func main"),
        ("func f()\n", 1, "has no body"),
    ],
)
def test_bad_code_is_a_clear_error_with_line(code, line, fragment):
    with pytest.raises(CodeError) as info:
        split_code(code)
    assert info.value.line == line
    assert fragment in str(info.value)
