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

// InputFrom is Input with the input given (a saved program run as a tool carries it in its code).
func InputFrom[T any](raw string) T {
	var v T
	if raw == "" {
		raw = "{}"
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		fmt.Fprintln(os.Stderr, "error: bad input:", err)
		os.Exit(2)
	}
	return v
}
