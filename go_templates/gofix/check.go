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
	"math"
	"sort"
	"strconv"
	"strings"
)

type checked struct {
	Errors []diag `json:"errors"`
	Phase  string `json:"phase,omitempty"` // "syntax" or "types" with Errors
	Plan   *plan  `json:"plan,omitempty"`  // the tools the program can call (see plan.go)
	// Lines where a tool's result is dereferenced (derefs.go), for a nil dereference's message.
	Derefs []deref `json:"derefs,omitempty"`
	// The JSON Schemas of the package-level types the request named (schema.go), when it checks.
	Schemas map[string]any `json:"schemas,omitempty"`
	// main.go as fixed (ptrfix.go), when it was: what the caller compiles instead.
	Src string `json:"src,omitempty"`
}

// noImports stands in for export data when there is none: the plan still follows the
// model's names to main.go's aliases, which is all it needs.
type noImports struct{}

func (noImports) Import(path string) (*types.Package, error) {
	return nil, fmt.Errorf("no export data for %s", path)
}

const maxErrors = 10

// check type-checks a rendered main.go; positions follow its //line directives. Without
// export data (haveCfg false) only the plan is computed, from what can be resolved.
func check(src string, haveCfg bool, lang string, schemas []string) checked {
	return checkFixing(src, haveCfg, lang, schemas, true)
}

// checkFixing is check; with fix, a program that does not type-check only because of
// ptr(<untyped constant>) calls (ptrfix.go) is fixed and checked again, once.
func checkFixing(src string, haveCfg bool, lang string, schemas []string, fix bool) checked {
	if !haveCfg {
		fs := token.NewFileSet()
		f, err := parser.ParseFile(fs, "gocode_main.go", src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return checked{Phase: "unchecked"}
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: noImports{}, GoVersion: lang, Error: func(error) {}}
		_, _ = conf.Check("main", fs, []*ast.File{f}, info)
		return checked{Phase: "unchecked", Plan: planOf(fs, f, info)}
	}
	fs := token.NewFileSet() // per check: a shared one would grow with every program
	f, err := parser.ParseFile(fs, "gocode_main.go", src, parser.AllErrors|parser.ParseComments|parser.SkipObjectResolution)
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
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Uses:       map[*ast.Ident]types.Object{},
		Defs:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	pkg, _ := conf.Check("main", fs, []*ast.File{f}, info)
	planned := planOf(fs, f, info)
	// Made-up enum values too, even next to other errors: a model fixes both in one round.
	out = append(out, enumValues(fs, f, info)...)
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
	if len(out) > 0 && fix {
		if fixes := ptrFixes(fs, f, info); len(fixes) > 0 {
			fixed := applyFixes(src, fixes)
			// Otherwise the errors as the model wrote it: the columns of its own lines.
			if again := checkFixing(fixed, haveCfg, lang, schemas, false); len(again.Errors) == 0 {
				again.Src = fixed
				return again
			}
		}
	}
	if len(out) > 0 {
		return checked{Errors: out, Phase: "types", Plan: planned}
	}
	return checked{Plan: planned, Derefs: derefsOf(fs, f, info), Schemas: schemasOf(pkg, schemas)}
}

// toolsImportName is what the generated main.go imports the tool bindings as.
const toolsImportName = "gocodetools"

// enumValues reports constants of a tool's enum type that are none of its values, such as
// Mode: "inof" where the schema allows "info" or "docs". Go converts any string literal to a
// string-based type, so without this a made-up value would only fail at the server. Only
// values the model's code gives (fields, map keys, assignments, arguments, channel sends,
// returns, conversions) are checked: never what is compared or looked up (==, switch cases,
// slices.Contains), nor the operands of an expression whose result is checked itself, and the
// zero value is allowed: it leaves an optional field unset.
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
	allowed := map[*types.TypeName][]*types.Const{}
	valuesOf := func(t *types.Named) []*types.Const {
		obj := t.Obj()
		if vals, ok := allowed[obj]; ok {
			return vals
		}
		var vals []*types.Const
		scope := obj.Pkg().Scope()
		for _, name := range scope.Names() {
			if c, ok := scope.Lookup(name).(*types.Const); ok && types.Identical(c.Type(), t) {
				vals = append(vals, c)
			}
		}
		// In the order the schema lists them, as the model view shows them.
		sort.Slice(vals, func(i, j int) bool { return vals[i].Pos() < vals[j].Pos() })
		allowed[obj] = vals
		return vals
	}
	// Expressions only compared or looked up, and operands of a larger constant expression.
	exempt := map[ast.Expr]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			exempt[ast.Unparen(n.X)] = true
			exempt[ast.Unparen(n.Y)] = true
		case *ast.CaseClause:
			for _, e := range n.List {
				exempt[ast.Unparen(e)] = true
			}
		case *ast.CallExpr:
			if isLookup(n.Fun, info) {
				for _, e := range n.Args[1:] {
					exempt[ast.Unparen(e)] = true
				}
			}
		}
		return true
	})
	var out []diag
	seen := map[token.Pos]bool{}
	checkExpr := func(e ast.Expr) {
		e = ast.Unparen(e)
		tv, ok := info.Types[e]
		if !ok || tv.Value == nil || seen[e.Pos()] || exempt[e] {
			return
		}
		named, ok := types.Unalias(tv.Type).(*types.Named)
		if !ok || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != toolsPath {
			return
		}
		if id, ok := e.(*ast.Ident); ok {
			if c, ok := info.Uses[id].(*types.Const); ok && types.Identical(c.Type(), named) {
				return // a typed constant: checked where it is declared
			}
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
		listed := map[string]bool{} // a value is also declared under a guessable alias name
		for _, c := range vals {
			if sameKind(c.Val(), tv.Value) && constant.Compare(c.Val(), token.EQL, tv.Value) {
				return
			}
			if s := literal(c.Val()); !listed[s] {
				listed[s] = true
				shown = append(shown, s)
			}
		}
		p := fs.Position(e.Pos())
		if strings.HasPrefix(p.Filename, "gocode_") {
			return
		}
		seen[e.Pos()] = true
		msg := fmt.Sprintf("%s is not a value of %s: use one of %s", literal(tv.Value), named.Obj().Name(), strings.Join(shown, ", "))
		out = append(out, diag{p.Filename, p.Line, p.Column, msg})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			_, isMap := types.Unalias(info.Types[n].Type).Underlying().(*types.Map)
			for _, el := range n.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if isMap {
						checkExpr(kv.Key)
					}
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
		case *ast.SendStmt:
			checkExpr(n.Value)
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

// isLookup tells whether a call only searches for its later arguments (slices.Contains,
// slices.Index): a value looked for is not a value given.
func isLookup(fun ast.Expr, info *types.Info) bool {
	if ix, ok := fun.(*ast.IndexExpr); ok { // slices.Contains[[]T]
		fun = ix.X
	} else if ix, ok := fun.(*ast.IndexListExpr); ok {
		fun = ix.X
	}
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	fn, ok := info.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil {
		return false
	}
	switch fn.Pkg().Path() + "." + fn.Name() {
	case "slices.Contains", "slices.Index", "slices.BinarySearch":
		return true
	}
	return false
}

// literal writes a constant as Go source would: 0.25 rather than the exact fraction 1/4.
func literal(v constant.Value) string {
	if v.Kind() == constant.Float {
		if f, exact := constant.Float64Val(v); exact || !math.IsInf(f, 0) {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return v.ExactString()
}

func sameKind(a, b constant.Value) bool {
	numeric := func(v constant.Value) bool { return v.Kind() == constant.Int || v.Kind() == constant.Float }
	return a.Kind() == b.Kind() || numeric(a) && numeric(b)
}
