package main

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// deref is one line of the model's code where a value a tool returned is dereferenced through
// a pointer (a field of an optional object, *p, a method with a value receiver): when the
// program panics with a nil pointer dereference on that line, the tools are the likely cause
// (an error ignored, so the result is the zero value, or an optional field the tool left out).
type deref struct {
	Line  int      `json:"line"`
	Tools []string `json:"tools"` // the exported names of the tools' functions in the bindings
}

// derefsOf follows the values of tool calls through the model's variables (assignments,
// declarations, range loops; through fields, elements, must(…) and &/* alike) to the lines
// where they are dereferenced. Only variables are followed: a value passed to a function of
// the model's own is not (its panic is on the function's line, where no tool is named).
func derefsOf(fs *token.FileSet, f *ast.File, info *types.Info) []deref {
	if info.Selections == nil {
		return []deref{}
	}
	model := func(pos token.Pos) bool {
		return !strings.HasPrefix(fs.Position(pos).Filename, generatedPrefix)
	}
	// main.go's aliases of the tool functions (var getWeather = gocodetools.GetWeather), and must.
	tools := map[types.Object]string{}
	for obj, a := range mainAliases(fs, f, info) {
		if strings.HasPrefix(a[0], toolsPathPrefix) {
			tools[obj] = a[1]
		}
	}
	var must types.Object
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "must" && fn.Recv == nil && !model(fn.Pos()) {
			must = info.Defs[fn.Name]
		}
	}
	if len(tools) == 0 {
		return []deref{}
	}
	from := map[types.Object]map[string]bool{} // a variable -> the tools its value may come from
	var origin func(e ast.Expr) map[string]bool
	origin = func(e ast.Expr) map[string]bool {
		switch e := ast.Unparen(e).(type) {
		case *ast.Ident:
			return from[info.Uses[e]]
		case *ast.CallExpr:
			fun := ast.Unparen(e.Fun)
			if ix, ok := fun.(*ast.IndexExpr); ok { // must[T](…)
				fun = ix.X
			}
			id, ok := fun.(*ast.Ident)
			if !ok {
				return nil
			}
			obj := info.Uses[id]
			if name, ok := tools[obj]; ok {
				return map[string]bool{name: true}
			}
			if obj != nil && obj == must && len(e.Args) == 1 {
				return origin(e.Args[0])
			}
		case *ast.SelectorExpr:
			if s := info.Selections[e]; s != nil && s.Kind() == types.FieldVal {
				return origin(e.X)
			}
		case *ast.IndexExpr:
			return origin(e.X)
		case *ast.SliceExpr:
			return origin(e.X)
		case *ast.StarExpr:
			return origin(e.X)
		case *ast.UnaryExpr:
			if e.Op == token.AND {
				return origin(e.X)
			}
		case *ast.TypeAssertExpr:
			return origin(e.X)
		}
		return nil
	}
	target := func(e ast.Expr) types.Object {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok || id.Name == "_" {
			return nil
		}
		if obj := info.Defs[id]; obj != nil {
			return obj
		}
		return info.Uses[id]
	}
	assign := func(lhs ast.Expr, rhs ast.Expr) bool {
		obj := target(lhs)
		if obj == nil {
			return false
		}
		changed := false
		for name := range origin(rhs) {
			if from[obj] == nil {
				from[obj] = map[string]bool{}
			}
			if !from[obj][name] {
				from[obj][name] = true
				changed = true
			}
		}
		return changed
	}
	pairs := func(lhs []ast.Expr, rhs []ast.Expr) bool {
		changed := false
		if len(lhs) == len(rhs) {
			for i := range lhs {
				changed = assign(lhs[i], rhs[i]) || changed
			}
		} else if len(rhs) == 1 && len(lhs) > 0 { // v, err := tool(ctx, in): the value is the first
			changed = assign(lhs[0], rhs[0])
		}
		return changed
	}
	// Until nothing changes: a variable may be assigned from one declared after it in the source.
	for round := 0; round < 8; round++ {
		changed := false
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil || !model(n.Pos()) {
				return true
			}
			switch n := n.(type) {
			case *ast.AssignStmt:
				changed = pairs(n.Lhs, n.Rhs) || changed
			case *ast.ValueSpec:
				lhs := make([]ast.Expr, len(n.Names))
				for i, id := range n.Names {
					lhs[i] = id
				}
				changed = pairs(lhs, n.Values) || changed
			case *ast.RangeStmt:
				if n.Value != nil {
					changed = assign(n.Value, n.X) || changed
				}
			}
			return true
		})
		if !changed {
			break
		}
	}
	byLine := map[int]map[string]bool{}
	note := func(pos token.Pos, x ast.Expr) {
		names := origin(x)
		if len(names) == 0 || !model(pos) {
			return
		}
		line := fs.Position(pos).Line
		if byLine[line] == nil {
			byLine[line] = map[string]bool{}
		}
		for name := range names {
			byLine[line][name] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			s := info.Selections[n]
			if s == nil || !s.Indirect() {
				return true
			}
			if s.Kind() == types.MethodVal {
				if sig, ok := s.Obj().Type().(*types.Signature); ok && sig.Recv() != nil {
					if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
						return true // a pointer receiver: a nil one is the method's to handle
					}
				}
			}
			note(n.Sel.Pos(), n.X)
		case *ast.StarExpr:
			if tv, ok := info.Types[n.X]; ok && tv.IsValue() {
				note(n.Pos(), n.X)
			}
		}
		return true
	})
	out := []deref{}
	for line, names := range byLine {
		d := deref{Line: line}
		for name := range names {
			d.Tools = append(d.Tools, name)
		}
		sort.Strings(d.Tools)
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}
