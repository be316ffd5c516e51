package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The packages the tests' programs import, with everything they depend on: their export data
// is what a check reads, as it reads the workspace's importcfg.
var stdPackages = []string{"context", "errors", "fmt", "strings", "math/rand", "crypto/rand", "text/template", "html/template", "encoding/json", "time"}

var importcfg string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gofix-test-")
	if err != nil {
		panic(err)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		importcfg = filepath.Join(dir, "importcfg")
		if err := writeImportcfg(importcfg); err != nil {
			os.Stderr.WriteString("gofix tests: " + err.Error() + "\n")
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// writeImportcfg lists export data for stdPackages as the workspace does (with -trimpath, as
// its builds are, so the build cache already holds them after a warm-up).
func writeImportcfg(path string) error {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	args := append([]string{"list", "-trimpath", "-export", "-deps", "-f", "{{if .Export}}packagefile {{.ImportPath}}={{.Export}}{{end}}"}, stdPackages...)
	out, err := exec.Command(gobin, args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return &listError{string(ee.Stderr)}
		}
		return err
	}
	return os.WriteFile(path, out, 0o600)
}

type listError struct{ stderr string }

func (e *listError) Error() string { return "go list: " + e.stderr }

func prepared1(t *testing.T, code string, predeclared ...string) prepared {
	t.Helper()
	if !loadImportcfg(importcfg) {
		t.Fatal("the importcfg did not load")
	}
	return prepare(code, "model.go", predeclared, true)
}

func importPaths(p prepared) []string {
	out := []string{}
	for _, im := range p.Imports {
		out = append(out, im.Path)
	}
	return out
}

func TestPrepareImports(t *testing.T) {
	tests := []struct {
		name        string
		code        string
		predeclared []string
		want        []string
		note        string
	}{
		{"added by symbol", "fmt.Println(strings.ToUpper(\"a\"))", nil, []string{"fmt", "strings"}, ""},
		{"context is always there", "<-ctx.Done()\n_ = context.Cause(ctx)", nil, []string{}, ""},
		{"crypto when only Read is used", "b := make([]byte, 4)\nrand.Read(b)", nil, []string{"crypto/rand"}, ""},
		{"math when Intn is used", "_ = rand.Intn(3)", nil, []string{"math/rand"}, ""},
		{"text/template preferred", "_ = template.New(\"x\")", nil, []string{"text/template"}, ""},
		{"an unused import dropped", "import \"strings\"\nfmt.Println(1)", nil, []string{"fmt"}, `line 1: "strings" is imported but not used; the import was removed`},
		{"a model's own import kept", "import \"encoding/json\"\nb, _ := json.Marshal(1)\n_ = b", nil, []string{"encoding/json"}, ""},
		{"a tool's name is no package", "_ = fmt.Sprint(getWeather.X)", []string{"getWeather"}, []string{"fmt"}, ""},
		{"an unknown name is left to the type check", "nosuchpkg.Do()", nil, []string{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := prepared1(t, tt.code, tt.predeclared...)
			if got.Phase != "" || len(got.Errors) > 0 {
				t.Fatalf("phase %q, errors %v", got.Phase, got.Errors)
			}
			if paths := importPaths(got); !reflect.DeepEqual(paths, tt.want) {
				t.Fatalf("imports = %v, want %v", paths, tt.want)
			}
			if tt.note != "" && !reflect.DeepEqual(got.Notes, []string{tt.note}) {
				t.Fatalf("notes = %q, want %q", got.Notes, tt.note)
			}
		})
	}
}

func TestPrepareSplits(t *testing.T) {
	code := strings.Join([]string{
		"package main",                 // 1: dropped
		"type Pair struct{ A, B int }", // 2: hoisted
		"const limit = 3",              // 3: hoisted
		"var count int",                // 4: hoisted (helper uses it)
		"func bump() int { count++; return count + limit }", // 5: hoisted
		"n := bump()",                 // 6: Run
		"var local = n * 2",           // 7: stays (uses a local)
		"fmt.Println(Pair{n, local})", // 8: Run
	}, "\n")
	got := prepared1(t, code)
	if got.Phase != "" {
		t.Fatalf("phase %q: %v", got.Phase, got.Errors)
	}
	var hoisted []string
	for _, h := range got.Hoisted {
		hoisted = append(hoisted, h.Text)
		if lines := strings.Split(code, "\n"); lines[h.Line-1] != h.Text || h.Col != 1 {
			t.Errorf("hoisted %q placed at line %d col %d", h.Text, h.Line, h.Col)
		}
	}
	if want := []string{"type Pair struct{ A, B int }", "const limit = 3", "var count int", "func bump() int { count++; return count + limit }"}; !reflect.DeepEqual(hoisted, want) {
		t.Fatalf("hoisted = %q, want %q", hoisted, want)
	}
	if !reflect.DeepEqual(got.Declared, []string{"Pair", "limit", "count", "bump"}) {
		t.Fatalf("declared = %v", got.Declared)
	}
	lines := strings.Split(got.Body, "\n")
	if len(lines) != 8 || strings.TrimSpace(lines[1]) != "" || lines[5] != "n := bump()" || lines[6] != "var local = n * 2" {
		t.Fatalf("the body keeps Run's statements on their lines, the rest blank: %q", lines)
	}
	if len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "line 1: the package clause is not needed") {
		t.Fatalf("notes = %q", got.Notes)
	}
}

func TestPrepareRefusals(t *testing.T) {
	tests := []struct {
		name, code, phase string
		line              int
		msg               string
	}{
		{"a module outside the standard library", "import \"github.com/x/y\"\ny.Do()", "imports", 1, `package "github.com/x/y" is not available`},
		{"an internal package", "import \"internal/abi\"\n_ = abi.X", "imports", 1, "is not available"},
		{"main beside statements", "x := 1\n_ = x\nfunc main() {}", "syntax", 3, "do not declare func main"},
		{"Run and main", "func Run(ctx context.Context) error { return nil }\nfunc main() {}", "syntax", 2, "do not declare func main"},
		{"a syntax error at the model's line", "x := 1\nif x > 0 {\n\ty := := x\n}", "syntax", 3, "syntax error: expected operand"},
		{"an unclosed bracket", "fmt.Println(1)\nfor {\n", "syntax", 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := prepared1(t, tt.code)
			if got.Phase != tt.phase || len(got.Errors) == 0 {
				t.Fatalf("phase %q errors %v, want phase %q", got.Phase, got.Errors, tt.phase)
			}
			e := got.Errors[0]
			if e.File != "model.go" || e.Line != tt.line || !strings.Contains(e.Msg, tt.msg) {
				t.Fatalf("error %+v, want model.go:%d %q", e, tt.line, tt.msg)
			}
		})
	}
}

func TestPrepareEntryPoints(t *testing.T) {
	tests := []struct{ code, entry, body string }{
		{"func main() { fmt.Println(1) }", "main", "gocodeModelMain()"},
		{"func Run(ctx context.Context) error { return nil }", "run", "return gocodeModelRun(ctx)"},
		{"```go\nfmt.Println(1)\n```", "", "\nfmt.Println(1)\n"}, // a Markdown fence is blanked
	}
	for _, tt := range tests {
		got := prepared1(t, tt.code)
		if got.Phase != "" || got.Entry != tt.entry || got.Body != tt.body {
			t.Errorf("prepare(%q): entry %q body %q phase %q %v", tt.code, got.Entry, got.Body, got.Phase, got.Errors)
		}
	}
}

// A main.go as the renderer lays it out: generated lines, then the model's under //line.
func mainGo(model string) string {
	return "package main\n\nimport (\n\t\"context\"\n\t\"fmt\"\n)\n\n//line gocode_main.go:1\nvar _ = fmt.Sprint\n\n" +
		"func Run(ctx context.Context) error {\n//line model.go:1:1\n" + model + "\n//line gocode_main.go:2\n\treturn nil\n}\n"
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name, model, phase string
		errs               []diag
	}{
		{"a valid program", "fmt.Println(ctx.Err())", "", nil},
		{"an undefined name", "x := 1\nfmt.Println(y)", "types", []diag{
			{"model.go", 1, 1, "declared and not used: x"},
			{"model.go", 2, 13, "undefined: y"},
		}},
		{"a wrong type", "var n int = \"three\"\n_ = n", "types", []diag{
			{"model.go", 1, 13, `cannot use "three" (untyped string constant) as int value in variable declaration`},
		}},
		{"a syntax error", "fmt.Println(", "syntax", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := check(mainGo(tt.model), loadImportcfg(importcfg), "go1.25", nil)
			if got.Phase != tt.phase {
				t.Fatalf("phase %q, want %q (errors %v)", got.Phase, tt.phase, got.Errors)
			}
			if tt.errs != nil && !reflect.DeepEqual(got.Errors, tt.errs) {
				t.Fatalf("errors = %+v, want %+v", got.Errors, tt.errs)
			}
			if tt.phase == "syntax" && (len(got.Errors) == 0 || !strings.HasPrefix(got.Errors[0].Msg, "syntax error: ")) {
				t.Fatalf("errors = %+v", got.Errors)
			}
		})
	}
	if got := check(mainGo("fmt.Println(1)"), false, "go1.25", nil); got.Phase != "unchecked" || got.Plan == nil {
		t.Fatalf("without export data only the plan is computed: %+v", got)
	}
	if got := check(mainGo(strings.Repeat("_ = nope\n", 20)), true, "go1.25", nil); len(got.Errors) != maxErrors {
		t.Fatalf("%d errors reported, want at most %d", len(got.Errors), maxErrors)
	}
}

func TestPackageNames(t *testing.T) {
	loadImportcfg(importcfg)
	tests := []struct {
		path, name string
		importable bool
	}{
		{"fmt", "fmt", true},
		{"net/http", "http", false},    // a standard package the importcfg does not list
		{"math/rand/v2", "rand", true}, // a dependency of math/rand: in the importcfg
		{"golang.org/x/sync/errgroup", "errgroup", true},
		{"unsafe", "unsafe", true},
		{"internal/abi", "abi", false},
		{"gocodews/rt", "rt", false},
		{"cmd/go", "go", false},
		{"github.com/x/y", "y", false},
		{"example.com/pkg/v3", "pkg", false},
	}
	for _, tt := range tests {
		if got := defaultName(tt.path); got != tt.name {
			t.Errorf("defaultName(%q) = %q, want %q", tt.path, got, tt.name)
		}
		if got := importable(tt.path); got != tt.importable {
			t.Errorf("importable(%q) = %v, want %v", tt.path, got, tt.importable)
		}
	}
}

func TestHandle(t *testing.T) {
	tests := []struct {
		req  request
		want string
	}{
		{request{Op: "ping"}, `{"ok":true}`},
		{request{Op: "launch"}, `{"fatal":"unknown op launch"}`},
		{request{Op: "preload", Importcfg: importcfg, Predeclared: []string{"fmt", "strings"}}, `{"ok":true}`},
	}
	for _, tt := range tests {
		out, _ := json.Marshal(handle(&tt.req))
		if string(out) != tt.want {
			t.Errorf("handle(%+v) = %s, want %s", tt.req, out, tt.want)
		}
	}
	ans, ok := handle(&request{Op: "prepare", Code: "fmt.Println(1)", Importcfg: importcfg}).(prepared)
	if !ok || !reflect.DeepEqual(importPaths(ans), []string{"fmt"}) {
		t.Fatalf("prepare through handle = %+v", ans)
	}
}

func TestPlan(t *testing.T) {
	src := "package main\n\nimport (\n\t\"context\"\n\tgocodert \"gocodews/rt\"\n\tgocodetools \"gocodews/tools/t1\"\n)\n\n" +
		"//line gocode_main.go:1\nvar getWeather = gocodetools.GetWeather\nvar getTime = gocodetools.GetTime\nvar callTool = gocodert.CallTool\n\n" +
		"func Run(ctx context.Context) error {\n//line model.go:1:1\n" +
		"getWeather(ctx, nil)\ncallTool(ctx, \"svc.tool\", nil)\nname := \"svc.\" + \"other\"\ncallTool(ctx, name, nil)\n" +
		"\n//line gocode_main.go:2\n\treturn nil\n}\n"
	// Only what the model's lines use counts (getTime is declared, never called); a name
	// computed at run time is reported where it is, since no approval can foresee it.
	want := &plan{
		Funcs: []string{"GetWeather"},
		Calls: []string{"svc.tool"},
		Pairs: [][2]string{},
		Any:   []string{"model.go:4: callTool with a name computed at run time"},
		Sites: map[string][]int{"GetWeather": {1}, "svc.tool": {2}},
	}
	if got := check(src, false, "go1.25", nil).Plan; !reflect.DeepEqual(got, want) {
		t.Fatalf("plan = %+v, want %+v", got, want)
	}
}

// ptrMainGo is mainGo with the generated ptr helper and a struct with numeric pointer fields.
func ptrMainGo(hoisted, model string) string {
	return "package main\n\nimport \"context\"\n\n//line gocode_main.go:1\nfunc ptr[T any](v T) *T { return &v }\n\n" +
		"type In struct {\n\tF *float64\n\tI *int\n\tG *float32\n}\n\n//line model.go:1:1\n" + hoisted +
		"\n//line gocode_main.go:9\nfunc Run(ctx context.Context) error {\n//line model.go:20:1\n" + model +
		"\n//line gocode_main.go:10\n\treturn nil\n}\n"
}

func TestPtrFixes(t *testing.T) {
	tests := []struct {
		name, hoisted, model string
		fixed                []string // what the answered main.go holds; none: not fixed
	}{
		{"fields of every numeric kind", "", "in := In{F: ptr(2), I: ptr(2.0), G: ptr(-1)}\n_ = in",
			[]string{"F: ptr[float64](2)", "I: ptr[int](2.0)", "G: ptr[float32](-1)"}},
		{"an assignment and a constant expression", "const k = 3", "var in In\nin.F = ptr(k * 2)\n_ = in",
			[]string{"in.F = ptr[float64](k * 2)"}},
		{"a return", "func f() *float64 { return ptr(7) }", "_ = f()", []string{"return ptr[float64](7)"}},
		{"what the type cannot hold", "", "_ = In{I: ptr(2.5)}", nil},
		{"a typed variable", "", "n := 2\n_ = In{F: ptr(n)}", nil},
		{"the model's own ptr", "func ptr2[T any](v T) *T { return &v }", "_ = In{F: ptr2(2)}", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := check(ptrMainGo(tt.hoisted, tt.model), loadImportcfg(importcfg), "go1.25", nil)
			if tt.fixed == nil {
				if got.Src != "" || len(got.Errors) == 0 {
					t.Fatalf("fixed %q, errors %v: want the model's errors, unfixed", got.Src, got.Errors)
				}
				return
			}
			if len(got.Errors) != 0 {
				t.Fatalf("errors %v after the fix:\n%s", got.Errors, got.Src)
			}
			for _, want := range tt.fixed {
				if !strings.Contains(got.Src, want) {
					t.Fatalf("fixed main.go lacks %q:\n%s", want, got.Src)
				}
			}
		})
	}
}
