package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"
)

type checked struct {
	Errors []diag `json:"errors"`
	Phase  string `json:"phase,omitempty"` // "syntax" or "types" with Errors
}

const maxErrors = 10

// check type-checks a rendered main.go; positions follow its //line directives.
func check(src string, haveCfg bool, lang string) checked {
	if !haveCfg {
		return checked{Phase: "unchecked"}
	}
	fs := token.NewFileSet() // per check: a shared one would grow with every program
	f, err := parser.ParseFile(fs, "gocode_main.go", src, parser.AllErrors|parser.SkipObjectResolution)
	if err != nil {
		var out []diag
		var list scanner.ErrorList
		if errors.As(err, &list) {
			for _, e := range list {
				out = append(out, diag{e.Pos.Filename, e.Pos.Line, e.Pos.Column, "syntax error: " + e.Msg})
			}
		}
		return checked{Errors: out, Phase: "syntax"}
	}
	var out []diag
	conf := types.Config{
		Importer:  lockedImporter{},
		GoVersion: lang,
		Error: func(err error) {
			var te types.Error
			if errors.As(err, &te) {
				p := te.Fset.Position(te.Pos)
				out = append(out, diag{p.Filename, p.Line, p.Column, te.Msg})
			}
		},
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	_, _ = conf.Check("main", fs, []*ast.File{f}, info)
	if len(out) == 0 {
		out = enumValues(fs, f, info)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File > out[j].File // the model's file first ("model.go" > "gocode_main.go")
		}
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Col < out[j].Col
	})
	if len(out) > maxErrors {
		out = out[:maxErrors]
	}
	if len(out) > 0 {
		return checked{Errors: out, Phase: "types"}
	}
	return checked{}
}

// toolsImportName is what the generated main.go imports the tool bindings as.
const toolsImportName = "gocodetools"

// enumValues reports constants of a tool's enum type that are none of its values, such as
// Mode: "inof" where the schema allows "info" or "docs". Go converts any string literal to a
// string-based type, so without this a made-up value would only fail at the server. Only
// values the model's code gives (fields, assignments, arguments, returns, conversions) are
// checked, never comparisons, and the zero value is allowed: it leaves an optional field unset.
func enumValues(fs *token.FileSet, f *ast.File, info *types.Info) []diag {
	toolsPath := ""
	for _, spec := range f.Imports {
		if spec.Name != nil && spec.Name.Name == toolsImportName {
			toolsPath, _ = strconv.Unquote(spec.Path.Value)
		}
	}
	if toolsPath == "" {
		return nil
	}
	allowed := map[*types.TypeName][]constant.Value{}
	valuesOf := func(t *types.Named) []constant.Value {
		obj := t.Obj()
		if vals, ok := allowed[obj]; ok {
			return vals
		}
		var vals []constant.Value
		scope := obj.Pkg().Scope()
		for _, name := range scope.Names() {
			if c, ok := scope.Lookup(name).(*types.Const); ok && types.Identical(c.Type(), t) {
				vals = append(vals, c.Val())
			}
		}
		allowed[obj] = vals
		return vals
	}
	var out []diag
	seen := map[token.Pos]bool{}
	checkExpr := func(e ast.Expr) {
		e = ast.Unparen(e)
		tv, ok := info.Types[e]
		if !ok || tv.Value == nil || seen[e.Pos()] {
			return
		}
		named, ok := types.Unalias(tv.Type).(*types.Named)
		if !ok || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != toolsPath {
			return
		}
		vals := valuesOf(named)
		if len(vals) == 0 {
			return
		}
		var zero constant.Value
		switch tv.Value.Kind() {
		case constant.String:
			zero = constant.MakeString("")
		case constant.Int, constant.Float:
			zero = constant.MakeInt64(0)
		}
		if zero != nil && constant.Compare(tv.Value, token.EQL, zero) {
			return
		}
		var shown []string
		for _, v := range vals {
			if sameKind(v, tv.Value) && constant.Compare(v, token.EQL, tv.Value) {
				return
			}
			shown = append(shown, v.ExactString())
		}
		sort.Strings(shown)
		p := fs.Position(e.Pos())
		if strings.HasPrefix(p.Filename, "gocode_") {
			return
		}
		seen[e.Pos()] = true
		msg := fmt.Sprintf("%s is not a %s value: use one of %s", tv.Value.ExactString(), named.Obj().Name(), strings.Join(shown, ", "))
		out = append(out, diag{p.Filename, p.Line, p.Column, msg})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			for _, el := range n.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					checkExpr(kv.Value)
				} else {
					checkExpr(el)
				}
			}
		case *ast.AssignStmt:
			for _, e := range n.Rhs {
				checkExpr(e)
			}
		case *ast.ValueSpec:
			for _, e := range n.Values {
				checkExpr(e)
			}
		case *ast.CallExpr:
			if info.Types[n.Fun].IsType() { // a conversion: its operand is the same value
				checkExpr(n)
				return true
			}
			for _, e := range n.Args {
				checkExpr(e)
			}
		case *ast.ReturnStmt:
			for _, e := range n.Results {
				checkExpr(e)
			}
		}
		return true
	})
	if len(out) > maxErrors {
		out = out[:maxErrors]
	}
	return out
}

func sameKind(a, b constant.Value) bool {
	numeric := func(v constant.Value) bool { return v.Kind() == constant.Int || v.Kind() == constant.Float }
	return a.Kind() == b.Kind() || numeric(a) && numeric(b)
}
