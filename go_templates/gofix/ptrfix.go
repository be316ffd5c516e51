package main

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// ptrHelper is the generic pointer helper main.go declares (gocode.schema.ir.PTR_HELPER).
const ptrHelper = "ptr"

// ptrFixes finds the model's ptr(<untyped constant>) calls whose value goes where a pointer to
// another numeric type is wanted: ptr(3) for a *float64 field infers T = int, and the program
// would not compile. It answers, per call, main.go's byte offset just after the name "ptr"
// and the type to instantiate it with ("[float64]"); the caller inserts them and checks again.
// Only where the target is known from the syntax around the call (a struct literal's field, an
// assignment, a typed var, an argument, a return) and is a pointer to a basic numeric type.
func ptrFixes(fs *token.FileSet, f *ast.File, info *types.Info) map[int]string {
	fixes := map[int]string{}
	model := func(pos token.Pos) bool {
		return !strings.HasPrefix(fs.Position(pos).Filename, generatedPrefix)
	}
	want := func(call ast.Expr, target types.Type) {
		c, ok := ast.Unparen(call).(*ast.CallExpr)
		if !ok || len(c.Args) != 1 || c.Ellipsis.IsValid() || !model(c.Pos()) || target == nil {
			return
		}
		name, ok := c.Fun.(*ast.Ident)
		if !ok || name.Name != ptrHelper {
			return
		}
		fn, ok := info.Uses[name].(*types.Func)
		if !ok || model(fn.Pos()) || fn.Type().(*types.Signature).TypeParams().Len() != 1 {
			return // the model's own ptr, or not a function
		}
		p, ok := target.Underlying().(*types.Pointer)
		if !ok {
			return
		}
		elem, ok := p.Elem().(*types.Basic)
		if !ok || elem.Info()&types.IsNumeric == 0 || !untypedConst(c.Args[0], info) {
			return
		}
		if got, ok := info.Types[c]; ok && types.Identical(got.Type, target) {
			return // already right
		}
		fixes[fs.PositionFor(name.End(), false).Offset] = "[" + elem.Name() + "]"
	}
	var sigs []*types.Signature // the enclosing functions' signatures, for returns
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if obj, ok := info.Defs[n.Name].(*types.Func); ok {
				sigs = append(sigs, obj.Type().(*types.Signature))
				if n.Body != nil {
					ast.Inspect(n.Body, visit)
				}
				sigs = sigs[:len(sigs)-1]
			}
			return false
		case *ast.FuncLit:
			if tv, ok := info.Types[n]; ok {
				if sig, ok := tv.Type.(*types.Signature); ok {
					sigs = append(sigs, sig)
					ast.Inspect(n.Body, visit)
					sigs = sigs[:len(sigs)-1]
				}
			}
			return false
		case *ast.CompositeLit:
			tv, ok := info.Types[n]
			if !ok {
				return true
			}
			under := tv.Type.Underlying()
			if pt, ok := under.(*types.Pointer); ok {
				under = pt.Elem().Underlying()
			}
			switch u := under.(type) {
			case *types.Struct:
				for i, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if key, ok := kv.Key.(*ast.Ident); ok {
							if fld := fieldNamed(u, key.Name); fld != nil {
								want(kv.Value, fld.Type())
							}
						}
					} else if i < u.NumFields() {
						want(el, u.Field(i).Type())
					}
				}
			case *types.Slice:
				for _, el := range n.Elts {
					want(valueOf(el), u.Elem())
				}
			case *types.Array:
				for _, el := range n.Elts {
					want(valueOf(el), u.Elem())
				}
			case *types.Map:
				for _, el := range n.Elts {
					want(valueOf(el), u.Elem())
				}
			}
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) && n.Tok == token.ASSIGN {
				for i, lhs := range n.Lhs {
					if tv, ok := info.Types[lhs]; ok {
						want(n.Rhs[i], tv.Type)
					}
				}
			}
		case *ast.ValueSpec:
			if n.Type != nil && len(n.Values) == len(n.Names) {
				if tv, ok := info.Types[n.Type]; ok {
					for _, v := range n.Values {
						want(v, tv.Type)
					}
				}
			}
		case *ast.CallExpr:
			if tv, ok := info.Types[n.Fun]; ok && !tv.IsType() {
				if sig, ok := tv.Type.Underlying().(*types.Signature); ok {
					params := sig.Params()
					for i, arg := range n.Args {
						if i < params.Len() && !(sig.Variadic() && i >= params.Len()-1) {
							want(arg, params.At(i).Type())
						}
					}
				}
			}
		case *ast.ReturnStmt:
			if len(sigs) > 0 {
				res := sigs[len(sigs)-1].Results()
				if res.Len() == len(n.Results) {
					for i, r := range n.Results {
						want(r, res.At(i).Type())
					}
				}
			}
		}
		return true
	}
	ast.Inspect(f, visit)
	return fixes
}

func valueOf(el ast.Expr) ast.Expr {
	if kv, ok := el.(*ast.KeyValueExpr); ok {
		return kv.Value
	}
	return el
}

func fieldNamed(s *types.Struct, name string) *types.Var {
	for i := 0; i < s.NumFields(); i++ {
		if s.Field(i).Name() == name {
			return s.Field(i)
		}
	}
	return nil
}

// untypedConst reports whether e is a constant expression made of literals and untyped
// constants only (3, -2.5, 1 << 10, a const declared without a type): what Go types by the
// context it is used in, and a type parameter's inference types by its default instead.
func untypedConst(e ast.Expr, info *types.Info) bool {
	if tv, ok := info.Types[e]; !ok || tv.Value == nil {
		return false
	}
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit, *ast.ParenExpr, *ast.UnaryExpr, *ast.BinaryExpr:
			return true
		case *ast.Ident:
			c, isConst := info.Uses[n].(*types.Const)
			if !isConst {
				ok = false
			} else if b, isBasic := c.Type().(*types.Basic); !isBasic || b.Info()&types.IsUntyped == 0 {
				ok = false
			}
			return false
		case nil:
			return false
		default:
			ok = false
			return false
		}
	})
	return ok
}

// applyFixes inserts each fix at its offset of src.
func applyFixes(src string, fixes map[int]string) string {
	offsets := make([]int, 0, len(fixes))
	for off := range fixes {
		offsets = append(offsets, off)
	}
	sort.Ints(offsets)
	var b strings.Builder
	last := 0
	for _, off := range offsets {
		if off < last || off > len(src) {
			continue
		}
		b.WriteString(src[last:off])
		b.WriteString(fixes[off])
		last = off
	}
	b.WriteString(src[last:])
	return b.String()
}
