package main

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"sort"
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
	_, _ = conf.Check("main", fs, []*ast.File{f}, nil)
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
