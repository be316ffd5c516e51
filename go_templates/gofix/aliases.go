package main

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// mainAliases reads the aliases main.go declares around the model's code (var getWeather =
// gocodetools.GetWeather, var callTool = gocodert.CallTool): each alias's object, with the
// path of the package it names and the name it takes from there.
func mainAliases(fs *token.FileSet, f *ast.File, info *types.Info) map[types.Object][2]string {
	importPath := map[string]string{}
	for _, spec := range f.Imports {
		if spec.Name != nil {
			importPath[spec.Name.Name], _ = strconv.Unquote(spec.Path.Value)
		}
	}
	alias := map[types.Object][2]string{}
	for _, d := range f.Decls {
		gen, ok := d.(*ast.GenDecl)
		if !ok || gen.Tok != token.VAR || !strings.HasPrefix(fs.Position(gen.Pos()).Filename, generatedPrefix) {
			continue
		}
		for _, s := range gen.Specs {
			vs := s.(*ast.ValueSpec)
			if len(vs.Names) != 1 || len(vs.Values) != 1 {
				continue
			}
			sel, ok := vs.Values[0].(*ast.SelectorExpr)
			if !ok {
				continue
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				continue
			}
			if obj := info.Defs[vs.Names[0]]; obj != nil {
				alias[obj] = [2]string{importPath[x.Name], sel.Sel.Name}
			}
		}
	}
	return alias
}
