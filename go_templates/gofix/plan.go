package main

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strings"
)

// plan is what a type-checked program can call, known before it runs: the typed tool
// functions it references (their exported names in the bindings), the constant names it gives
// callTool, and the constant (server, tool) pairs of direct runtime calls. Any is non-empty
// when the program may call tools no one can name before it runs (a callTool name computed at
// run time, callTool passed around as a value, a session of its own), each with its line.
type plan struct {
	Funcs []string    `json:"funcs"`
	Calls []string    `json:"calls"`
	Pairs [][2]string `json:"pairs"`
	Any   []string    `json:"any"`
	// Sites are the lines of the model's code where each tool is called: by its function's
	// exported name, callTool's constant name, or "server.tool" for a direct runtime call.
	Sites map[string][]int `json:"sites"`
}

const (
	rtImportPath    = "gocodews/rt"
	toolsPathPrefix = "gocodews/tools/"
	sdkPathPrefix   = "github.com/modelcontextprotocol/"
	generatedPrefix = "gocode_"
	callToolAlias   = "CallTool"
	// CallToolStream names its tool as CallTool does: callToolStream(ctx, "server.tool", args, fn).
	callToolStreamAlias = "CallToolStream"
	// CallToolContent too: callToolContent(ctx, "server.tool", args).
	callToolContentAlias = "CallToolContent"
	searchToolsAlias     = "SearchTools"
)

// planOf reads a checked (or partly checked) main.go. Only what the model's own lines use
// counts: the generated aliases mention every tool the code names, which is the point.
func planOf(fs *token.FileSet, f *ast.File, info *types.Info) *plan {
	p := &plan{Funcs: []string{}, Calls: []string{}, Pairs: [][2]string{}, Any: []string{}, Sites: map[string][]int{}}
	model := func(pos token.Pos) (string, bool) {
		at := fs.Position(pos)
		return fmt.Sprintf("%s:%d", at.Filename, at.Line), !strings.HasPrefix(at.Filename, generatedPrefix)
	}
	site := func(key string, pos token.Pos) { p.Sites[key] = append(p.Sites[key], fs.Position(pos).Line) }
	// The aliases main.go declares: var getWeather = gocodetools.GetWeather, var callTool = gocodert.CallTool.
	alias := mainAliases(fs, f, info)
	// The call each function name is called by, to read its constant arguments.
	callOf := map[*ast.Ident]*ast.CallExpr{}
	ast.Inspect(f, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			fun := ast.Unparen(call.Fun)
			if ix, ok := fun.(*ast.IndexExpr); ok { // gocodert.CallJSON[T](…)
				fun = ix.X
			}
			switch fn := fun.(type) {
			case *ast.Ident:
				callOf[fn] = call
			case *ast.SelectorExpr:
				callOf[fn.Sel] = call
			}
		}
		return true
	})
	str := func(e ast.Expr) (string, bool) {
		tv, ok := info.Types[ast.Unparen(e)]
		if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
			return "", false
		}
		return constant.StringVal(tv.Value), true
	}
	funcs, calls, pairs := map[string]bool{}, map[string]bool{}, map[[2]string]bool{}
	anyWhy := func(where, why string) { p.Any = append(p.Any, where+": "+why) }
	for id, obj := range info.Uses {
		where, mine := model(id.Pos())
		if !mine || obj == nil {
			continue
		}
		path, name := "", ""
		if target, ok := alias[obj]; ok {
			path, name = target[0], target[1]
		} else if fn, ok := obj.(*types.Func); ok && fn.Pkg() != nil {
			if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil {
				continue // a method of a tool's type (JSON encoding), not a call of a tool
			}
			path, name = fn.Pkg().Path(), fn.Name()
		} else if obj.Pkg() != nil && strings.HasPrefix(obj.Pkg().Path(), sdkPathPrefix) {
			path = obj.Pkg().Path()
		} else {
			continue
		}
		call := callOf[id]
		switch {
		case strings.HasPrefix(path, toolsPathPrefix):
			funcs[name] = true
			site(name, id.Pos())
		case strings.HasPrefix(path, sdkPathPrefix):
			anyWhy(where, "uses the MCP SDK directly")
		case path == rtImportPath && (name == callToolAlias || name == callToolStreamAlias || name == callToolContentAlias):
			if call == nil || len(call.Args) < 2 {
				anyWhy(where, "callTool used as a value")
			} else if s, ok := str(call.Args[1]); ok {
				calls[s] = true
				site(s, id.Pos())
			} else {
				anyWhy(where, "callTool with a name computed at run time")
			}
		case path == rtImportPath && (name == "CallJSON" || name == "CallText" || name == "CallContent"):
			if call == nil || len(call.Args) < 3 {
				anyWhy(where, "a runtime call function used as a value")
				continue
			}
			server, ok1 := str(call.Args[1])
			tool, ok2 := str(call.Args[2])
			if ok1 && ok2 {
				pairs[[2]string{server, tool}] = true
				site(server+"."+tool, id.Pos())
			} else {
				anyWhy(where, "a runtime call with a server or tool computed at run time")
			}
		case path == rtImportPath && name == "Session":
			anyWhy(where, "opens a server session of its own")
		}
	}
	for _, group := range f.Comments {
		for _, c := range group.List {
			if where, mine := model(c.Pos()); mine && strings.HasPrefix(c.Text, "//go:linkname") {
				anyWhy(where, "a //go:linkname directive")
			}
		}
	}
	for name := range funcs {
		p.Funcs = append(p.Funcs, name)
	}
	for name := range calls {
		p.Calls = append(p.Calls, name)
	}
	for pair := range pairs {
		p.Pairs = append(p.Pairs, pair)
	}
	sort.Strings(p.Funcs)
	sort.Strings(p.Calls)
	sort.Slice(p.Pairs, func(i, j int) bool { return p.Pairs[i][0]+"\x00"+p.Pairs[i][1] < p.Pairs[j][0]+"\x00"+p.Pairs[j][1] })
	sort.Strings(p.Any)
	for key, lines := range p.Sites {
		slices.Sort(lines)
		p.Sites[key] = slices.Compact(lines)
	}
	return p
}
