package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

type diag struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	Msg  string `json:"msg"`
}

type importOut struct {
	Name string `json:"name,omitempty"`
	Path string `json:"path"`
	Line int    `json:"line,omitempty"` // 0 for an import added by symbol
}

type chunk struct {
	Line int    `json:"line"`
	Col  int    `json:"col"`
	Text string `json:"text"`
}

type prepared struct {
	Imports  []importOut `json:"imports"`
	Hoisted  []chunk     `json:"hoisted"`
	Body     string      `json:"body"`
	Declared []string    `json:"declared"`
	Notes    []string    `json:"notes"`
	Entry    string      `json:"entry"` // "main" or "run" when the code declares one, else ""
	Errors   []diag      `json:"errors,omitempty"`
	Phase    string      `json:"phase,omitempty"` // "syntax" or "imports" with Errors
}

type tok struct {
	off, end int
	tok      token.Token
	lit      string
}

type segment struct {
	kind       string // package, import, func, method, type, var, const, stmt
	start, end int    // byte offsets in the code
	first      int    // index of its first token
	nameOff    int    // func: offset of the name
	hoist      bool
	names      []string
	refs       map[string]bool
}

// prepare splits code into Run's statements and what is hoisted to the file (see main.go).
func prepare(code, filename string, predeclared []string, haveStd bool) prepared {
	code = unfence(strings.ReplaceAll(code, "\r\n", "\n"))
	toks, bracketErr := scan(code, filename)
	segs := split(code, toks)

	pre := map[string]bool{}
	for _, n := range predeclared {
		pre[n] = true
	}
	locals := map[string]bool{"ctx": true}
	statements := false
	for i := range segs {
		s := &segs[i]
		if s.kind == "stmt" {
			statements = true
			for _, n := range shortVarNames(toks[s.first:]) {
				locals[n] = true
			}
			continue
		}
		s.names, s.refs = declInfo(code, filename, s)
	}
	// Types, funcs, methods and constants always go to the file; a var goes there when a
	// hoisted declaration needs it (helpers see package-level state), else it stays in Run.
	needed := map[string]bool{}
	for i := range segs {
		s := &segs[i]
		switch s.kind {
		case "type", "func", "method":
			s.hoist = true
		case "const":
			s.hoist = !intersects(s.refs, locals)
		}
		if s.hoist {
			for r := range s.refs {
				needed[r] = true
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for i := range segs {
			s := &segs[i]
			if s.kind == "var" && !s.hoist && intersectsList(needed, s.names) && !intersects(s.refs, locals) {
				s.hoist, changed = true, true
				for r := range s.refs {
					needed[r] = true
				}
			}
		}
	}

	var out prepared
	body := []byte(code)
	blank := func(s *segment) {
		for k := s.start; k < s.end; k++ {
			if body[k] != '\n' {
				body[k] = ' '
			}
		}
	}
	var importSegs []*segment
	entryLine := map[string]int{}
	for i := range segs {
		s := &segs[i]
		switch {
		case s.kind == "package":
			blank(s)
			out.Notes = append(out.Notes, fmt.Sprintf("line %d: the package clause is not needed and was dropped", lineOf(code, s.start)))
		case s.kind == "import":
			blank(s)
			importSegs = append(importSegs, s)
		case s.hoist:
			blank(s)
			text := code[s.start:s.end]
			if s.kind == "func" {
				name := identAt(code, s.nameOff)
				rename := map[string]string{"main": "gocodeModelMain", "Run": "gocodeModelRun"}[name]
				if rename != "" {
					entryLine[name] = lineOf(code, s.start)
					rel := s.nameOff - s.start
					text = text[:rel] + rename + text[rel+len(name):]
				}
			}
			out.Hoisted = append(out.Hoisted, chunk{lineOf(code, s.start), colOf(code, s.start), text})
			out.Declared = append(out.Declared, s.names...)
		}
	}
	out.Body = string(body)
	if len(entryLine) > 0 {
		for _, name := range []string{"main", "Run"} {
			line, ok := entryLine[name]
			if ok && (statements || len(entryLine) > 1) {
				out.Phase = "syntax"
				out.Errors = []diag{{filename, line, 1, fmt.Sprintf("do not declare func %s: your code is the body of Run(ctx context.Context) error — write the statements at the top level, and give helper functions other names", name)}}
				return out
			}
		}
		if _, ok := entryLine["main"]; ok {
			out.Entry, out.Body = "main", "gocodeModelMain()"
		} else {
			out.Entry, out.Body = "run", "return gocodeModelRun(ctx)"
		}
	}

	// One parse of the whole program as it will be laid out: Go's own syntax errors at the
	// model's positions, and the scopes that tell which selectors name packages.
	src := synthetic(code, filename, importSegs, out.Hoisted, out.Body, out.Entry)
	fs := token.NewFileSet()
	file, err := parser.ParseFile(fs, "gocode_main.go", src, parser.AllErrors)
	if err != nil {
		out.Phase, out.Errors = "syntax", syntaxErrors(err, filename, bracketErr, code)
		return out
	}
	if bracketErr != nil { // the parser accepted it, so the scan was wrong; trust the parser
		bracketErr = nil
	}
	fixImports(&out, file, fs, filename, pre, haveStd)
	return out
}

// unfence blanks a Markdown code fence around the code (```go … ```), keeping line numbers:
// models paste their answer that way often enough, and no Go program starts with one.
func unfence(code string) string {
	lines := strings.Split(code, "\n")
	first, last := 0, len(lines)-1
	for first < len(lines) && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	for last > first && strings.TrimSpace(lines[last]) == "" {
		last--
	}
	if first >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[first]), "```") {
		return code
	}
	lines[first] = ""
	if last > first && strings.TrimSpace(lines[last]) == "```" {
		lines[last] = ""
	}
	return strings.Join(lines, "\n")
}

// scan tokenizes code; bracketErr is the first closing bracket with nothing open to close,
// or the innermost bracket never closed.
func scan(code, filename string) ([]tok, *diag) {
	fs := token.NewFileSet()
	f := fs.AddFile(filename, -1, len(code))
	var s scanner.Scanner
	s.Init(f, []byte(code), func(token.Position, string) {}, 0)
	var toks []tok
	type open struct {
		t   token.Token
		off int
	}
	var stack []open
	var bad *diag
	match := map[token.Token]token.Token{token.RPAREN: token.LPAREN, token.RBRACK: token.LBRACK, token.RBRACE: token.LBRACE}
	for {
		pos, t, lit := s.Scan()
		if t == token.EOF {
			break
		}
		off := f.Offset(pos)
		end := off + len(lit)
		if lit == "" || t == token.SEMICOLON && lit == "\n" {
			end = off + len(t.String())
			if t == token.SEMICOLON && lit == "\n" {
				end = off
			}
		}
		toks = append(toks, tok{off, end, t, lit})
		switch t {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			stack = append(stack, open{t, off})
		case token.RPAREN, token.RBRACK, token.RBRACE:
			if len(stack) == 0 || stack[len(stack)-1].t != match[t] {
				if bad == nil {
					bad = &diag{filename, lineOf(code, off), colOf(code, off), fmt.Sprintf("syntax error: unexpected %s: nothing is open here to close", t)}
				}
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if bad == nil && len(stack) > 0 {
		o := stack[len(stack)-1]
		closer := map[token.Token]string{token.LPAREN: ")", token.LBRACK: "]", token.LBRACE: "}"}[o.t]
		bad = &diag{filename, lineOf(code, o.off), colOf(code, o.off), fmt.Sprintf("syntax error: this %s is never closed (missing %s)", o.t, closer)}
	}
	return toks, bad
}

// split cuts the token stream at top-level semicolons into segments and classifies them.
func split(code string, toks []tok) []segment {
	var segs []segment
	depth, start := 0, -1
	closeSeg := func(from, to int) {
		if to < from {
			return
		}
		segs = append(segs, classify(toks, from, to))
	}
	for i, t := range toks {
		if start < 0 {
			if t.tok == token.SEMICOLON {
				continue
			}
			start = i
		}
		switch t.tok {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			depth++
		case token.RPAREN, token.RBRACK, token.RBRACE:
			if depth > 0 {
				depth--
			}
		case token.SEMICOLON:
			if depth == 0 {
				closeSeg(start, i-1)
				start = -1
			}
		}
	}
	if start >= 0 {
		last := len(toks) - 1
		for last > start && toks[last].tok == token.SEMICOLON && toks[last].lit == "\n" {
			last--
		}
		closeSeg(start, last)
	}
	return segs
}

func classify(toks []tok, from, to int) segment {
	s := segment{kind: "stmt", start: toks[from].off, end: toks[to].end, first: from}
	next := func(k int) token.Token {
		if k <= to {
			return toks[k].tok
		}
		return token.ILLEGAL
	}
	switch toks[from].tok {
	case token.PACKAGE:
		s.kind = "package"
	case token.IMPORT:
		s.kind = "import"
	case token.TYPE:
		s.kind = "type"
	case token.CONST:
		s.kind = "const"
	case token.VAR:
		s.kind = "var"
	case token.FUNC:
		switch next(from + 1) {
		case token.IDENT:
			s.kind, s.nameOff = "func", toks[from+1].off
		case token.LPAREN: // a method, or a func literal used as a statement
			depth := 0
			for k := from + 1; k <= to; k++ {
				if toks[k].tok == token.LPAREN {
					depth++
				} else if toks[k].tok == token.RPAREN {
					depth--
					if depth == 0 {
						// a method names itself next: func (r T) Name( or Name[
						if next(k+1) == token.IDENT && (next(k+2) == token.LPAREN || next(k+2) == token.LBRACK) {
							s.kind = "method"
						}
						break
					}
				}
			}
		}
	}
	return s
}

// shortVarNames are the names a top-level statement "a, b := …" declares.
func shortVarNames(ts []tok) []string {
	var names []string
	for _, t := range ts {
		switch t.tok {
		case token.IDENT:
			names = append(names, t.lit)
		case token.COMMA:
		case token.DEFINE:
			return names
		default:
			return nil
		}
	}
	return nil
}

// declInfo parses one declaration alone, at its own position, for the names it declares and
// the identifiers it refers to (a superset: field and parameter names are included).
func declInfo(code, filename string, s *segment) ([]string, map[string]bool) {
	refs := map[string]bool{}
	if s.kind == "import" || s.kind == "package" {
		return nil, refs
	}
	fs := token.NewFileSet()
	f, err := parser.ParseFile(fs, "", "package p;"+code[s.start:s.end], parser.SkipObjectResolution)
	if err != nil || len(f.Decls) == 0 {
		return nil, refs
	}
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names = append(names, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					names = append(names, sp.Name.Name)
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	declared := map[string]bool{}
	for _, n := range names {
		declared[n] = true
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			ast.Inspect(n.X, func(m ast.Node) bool {
				if id, ok := m.(*ast.Ident); ok && !declared[id.Name] {
					refs[id.Name] = true
				}
				return true
			})
			return false
		case *ast.Ident:
			if !declared[n.Name] {
				refs[n.Name] = true
			}
		}
		return true
	})
	return names, refs
}

// synthetic lays the program out as main.go will: imports, hoisted declarations, then Run.
func synthetic(code, filename string, imports []*segment, hoisted []chunk, body, entry string) string {
	var b strings.Builder
	b.WriteString("package main\n")
	for _, s := range imports {
		fmt.Fprintf(&b, "//line %s:%d:%d\n%s\n", filename, lineOf(code, s.start), colOf(code, s.start), code[s.start:s.end])
	}
	for _, h := range hoisted {
		fmt.Fprintf(&b, "//line %s:%d:%d\n%s\n", filename, h.Line, h.Col, h.Text)
	}
	b.WriteString("//line gocode_main.go:1:1\nfunc Run(ctx context.Context) error {\n")
	if entry == "" {
		fmt.Fprintf(&b, "//line %s:1:1\n", filename)
	}
	b.WriteString(body)
	b.WriteString("\n//line gocode_main.go:2:1\n}\n")
	return b.String()
}

func syntaxErrors(err error, filename string, bracket *diag, code string) []diag {
	var out []diag
	list, _ := err.(scanner.ErrorList)
	for _, e := range list {
		if e.Pos.Filename != filename {
			continue
		}
		out = append(out, diag{filename, e.Pos.Line, e.Pos.Column, syntaxMessage(e.Msg)})
		break // the rest follow from the first
	}
	// An unbalanced bracket is named where it is: the parser only notices it later.
	if bracket != nil && (len(out) == 0 || strings.Contains(bracket.Msg, "nothing is open") || strings.Contains(out[0].Msg, "EOF")) {
		return []diag{*bracket}
	}
	if len(out) == 0 {
		line := strings.Count(code, "\n") + 1
		out = append(out, diag{filename, line, 1, "syntax error: the code does not form a valid Go function body"})
	}
	return out
}

// syntaxMessage words go/parser's messages as the Go compiler does where the parser's
// wording hides the likely cause.
func syntaxMessage(msg string) string {
	closer := func(ctx string) string {
		if strings.Contains(ctx, "composite literal") {
			return "}"
		}
		return ")"
	}
	if ctx, ok := strings.CutPrefix(msg, "missing ',' before newline in "); ok {
		return "syntax error: unexpected newline in " + ctx + "; possibly missing comma or " + closer(ctx)
	}
	if ctx, ok := strings.CutPrefix(msg, "missing ',' in "); ok {
		return "syntax error: unexpected name in " + ctx + "; possibly missing comma or " + closer(ctx)
	}
	if !strings.HasPrefix(msg, "syntax error") {
		msg = "syntax error: " + msg
	}
	return msg
}

// fixImports adds the imports the code uses by symbol and drops the ones it does not use.
func fixImports(out *prepared, file *ast.File, fs *token.FileSet, filename string, pre map[string]bool, haveStd bool) {
	uses := map[string][]string{} // unresolved selector base -> selectors
	ast.Inspect(file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil && !pre[id.Name] {
				if !contains(uses[id.Name], sel.Sel.Name) {
					uses[id.Name] = append(uses[id.Name], sel.Sel.Name)
				}
			}
		}
		return true
	})
	have := map[string]bool{}
	for _, spec := range file.Imports {
		path, _ := strconv.Unquote(spec.Path.Value)
		pos := fs.Position(spec.Path.Pos())
		if haveStd && !importable(path) {
			out.Phase = "imports"
			out.Errors = append(out.Errors, diag{filename, pos.Line, pos.Column, fmt.Sprintf("package %q is not available: only the standard library and golang.org/x/sync/errgroup can be imported", path)})
			continue
		}
		name := defaultName(path)
		if spec.Name != nil {
			name = spec.Name.Name
		}
		if name != "_" && name != "." && uses[name] == nil {
			out.Notes = append(out.Notes, fmt.Sprintf("line %d: %q is imported but not used; the import was removed", pos.Line, path))
			continue
		}
		have[name] = true
		im := importOut{Path: path, Line: pos.Line}
		if spec.Name != nil {
			im.Name = spec.Name.Name
		}
		out.Imports = append(out.Imports, im)
	}
	if out.Phase != "" || !haveStd {
		return
	}
	var want []string
	for name := range uses {
		if !have[name] && name != "context" {
			want = append(want, name)
		}
	}
	sort.Strings(want)
	for _, name := range want {
		if path, ok := resolve(name, uses[name]); ok {
			out.Imports = append(out.Imports, importOut{Path: path})
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func intersects(a map[string]bool, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}

func intersectsList(a map[string]bool, names []string) bool {
	for _, n := range names {
		if a[n] {
			return true
		}
	}
	return false
}

func lineOf(code string, off int) int { return strings.Count(code[:off], "\n") + 1 }

func colOf(code string, off int) int { return off - strings.LastIndex(code[:off], "\n") }

func identAt(code string, off int) string {
	end := off
	for end < len(code) && (code[end] == '_' || code[end] >= '0' && code[end] <= '9' || code[end] >= 'a' && code[end] <= 'z' || code[end] >= 'A' && code[end] <= 'Z' || code[end] >= 0x80) {
		end++
	}
	return code[off:end]
}
