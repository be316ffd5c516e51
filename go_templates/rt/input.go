package rt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// EnvInput carries a saved program's input as JSON (otherwise its first argument, else {}).
const EnvInput = "GOCODE_INPUT"

// SetDefaultServers makes specs the servers used when GOCODE_SERVERS is not set (a standalone
// build of a saved program carries its config's servers this way). The specs keep the config's
// ${VAR} and ${VAR:-default} references, expanded here from this process's environment, so the
// binary holds no secret of the machine that built it.
func SetDefaultServers(specs string) {
	if os.Getenv(EnvServers) != "" {
		return
	}
	var doc any
	if err := json.Unmarshal([]byte(specs), &doc); err != nil {
		fmt.Fprintln(os.Stderr, "error: the built-in servers are not valid JSON:", err)
		os.Exit(2)
	}
	doc, unset := expandRefs(doc)
	if unset != "" {
		fmt.Fprintf(os.Stderr, "error: environment variable %s is not set (the built-in servers need it; or set %s)\n", unset, EnvServers)
		os.Exit(2)
	}
	out, _ := json.Marshal(doc)
	os.Setenv(EnvServers, string(out))
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// expandRefs expands every ${VAR} / ${VAR:-default} in the strings of v, as gocode's config
// loader does; unset names the first variable that is unset and has no default.
func expandRefs(v any) (any, string) {
	switch x := v.(type) {
	case string:
		unset := ""
		out := envRef.ReplaceAllStringFunc(x, func(ref string) string {
			m := envRef.FindStringSubmatch(ref)
			if val, ok := os.LookupEnv(m[1]); ok {
				return val
			}
			if strings.Contains(ref, ":-") {
				return m[2]
			}
			if unset == "" {
				unset = m[1]
			}
			return ""
		})
		return out, unset
	case []any:
		for i, e := range x {
			var unset string
			if x[i], unset = expandRefs(e); unset != "" {
				return x, unset
			}
		}
		return x, ""
	case map[string]any:
		for k, e := range x {
			var unset string
			if x[k], unset = expandRefs(e); unset != "" {
				return x, unset
			}
		}
		return x, ""
	}
	return v, ""
}

// Input decodes a saved program's input (GOCODE_INPUT, else its first argument, else {}) into T.
// Its schema is read from T's declaration by gocode's type checker (gofix/schema.go), never by
// running the program.
func Input[T any]() T {
	raw := os.Getenv(EnvInput)
	if raw == "" && len(os.Args) > 1 {
		raw = os.Args[1]
	}
	return InputFrom[T](raw)
}

// standalone is set by [StandaloneInput]: the program is a binary of its own (gocode build),
// so its [Result] value is printed when no result file is named.
var standalone bool

// StandaloneInput is [Input] for a binary built by gocode build: -h or --help prints usage (the
// saved program's description and input, written by gocode from its schema) and exits 0; any
// other option, or more than one argument, is refused with exit 2; the value given to [Result]
// is printed on stdout after the program's own output (see [EnvResultFile]).
func StandaloneInput[T any](usage string) T {
	standalone = true
	args := os.Args[1:]
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Print(usage)
			os.Exit(0)
		}
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	switch {
	case len(args) > 1:
		badInput(fmt.Sprintf("one argument expected (the input as one JSON object), got %d", len(args)))
	case len(args) == 1 && strings.HasPrefix(args[0], "-"):
		badInput(fmt.Sprintf("unknown option %s", args[0]))
	}
	raw := os.Getenv(EnvInput)
	if raw == "" && len(args) == 1 {
		raw = args[0]
	}
	return InputFrom[T](raw)
}

// badInput ends the run for input that cannot be the program's: exit 2, with how to ask for usage.
func badInput(why string) {
	hint := ""
	if standalone {
		hint = fmt.Sprintf(" (%s --help describes the input)", os.Args[0])
	}
	fmt.Fprintf(os.Stderr, "error: bad input: %s%s\n", why, hint)
	os.Exit(2)
}

// InputFrom is Input with the input given (a saved program run as a tool carries it in its code).
func InputFrom[T any](raw string) T {
	var v T
	if raw == "" {
		raw = "{}"
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		badInput(err.Error())
	}
	if dec.More() {
		badInput("more than one JSON value")
	}
	return v
}
