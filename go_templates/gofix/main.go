// Command gofix prepares a model's Go code for gocode's generated main.go and type-checks the
// result, with Go's own go/scanner, go/parser and go/types.
//
// It is a long-lived helper: one JSON request per line on stdin, one JSON answer per line on
// stdout, in order. Requests:
//
//	{"op":"prepare","code":"…","filename":"model.go","predeclared":["getWeather",…],"importcfg":"/…/std.importcfg","known":"/…/std.list"}
//	{"op":"check","src":"…main.go…","importcfg":"/…/importcfg","lang":"go1.25","schemas":["Input"]}
//	{"op":"preload","predeclared":["fmt",…],"importcfg":"/…/importcfg"}
//
// prepare splits the code into imports, top-level declarations (hoisted out of Run) and Run's
// statements, adds the standard-library imports the code uses (by symbol, as goimports does)
// and drops imports it does not use. check type-checks a rendered main.go against the export
// data named by an importcfg, so only code that type-checks is compiled and linked; its
// answer also names the tools the program can call (plan.go) and, for the type names in
// schemas, their JSON Schemas read from the declarations (schema.go). known (optional) lists more
// packages a program may import, one per line, whose export data is not built yet: prepare
// accepts and adds them, and check then says it could not import them.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

type request struct {
	Op          string   `json:"op"`
	Code        string   `json:"code"`
	Filename    string   `json:"filename"`
	Predeclared []string `json:"predeclared"`
	Importcfg   string   `json:"importcfg"`
	Known       string   `json:"known"`
	Src         string   `json:"src"`
	Lang        string   `json:"lang"`
	Schemas     []string `json:"schemas"`
}

func main() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			var req request
			var answer any
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				answer = map[string]string{"fatal": "bad request: " + jerr.Error()}
			} else {
				answer = handle(&req)
			}
			if eerr := enc.Encode(answer); eerr != nil {
				fmt.Fprintln(os.Stderr, "gofix:", eerr)
				os.Exit(1)
			}
			if ferr := out.Flush(); ferr != nil {
				os.Exit(1)
			}
		}
		if err != nil {
			return
		}
	}
}

func handle(req *request) (answer any) {
	defer func() {
		if r := recover(); r != nil {
			answer = map[string]string{"fatal": fmt.Sprint("internal error: ", r)}
		}
	}()
	switch req.Op {
	case "prepare":
		if req.Filename == "" {
			req.Filename = "model.go"
		}
		haveStd := loadImportcfg(req.Importcfg)
		loadKnown(req.Known)
		return prepare(req.Code, req.Filename, req.Predeclared, haveStd)
	case "check": // the answer carries the plan too (plan.go); with no importcfg, only the plan
		return check(req.Src, loadImportcfg(req.Importcfg), req.Lang, req.Schemas)
	case "preload": // export data of packages most programs use, so the first real check is fast
		loadImportcfg(req.Importcfg)
		mu.Lock()
		defer mu.Unlock()
		for _, p := range req.Predeclared {
			load(p)
		}
		return map[string]bool{"ok": true}
	case "ping":
		return map[string]bool{"ok": true}
	}
	return map[string]string{"fatal": "unknown op " + req.Op}
}
