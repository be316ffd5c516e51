package rt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
)

// EnvInput carries a saved program's input as JSON (otherwise its first argument, else {}).
const EnvInput = "GOCODE_INPUT"

// EnvInputSchema, when set, makes a saved program print its input's JSON Schema and exit (with
// an output type given, {"input": …, "output": …}).
const EnvInputSchema = "GOCODE_INPUT_SCHEMA"

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

// Input decodes a saved program's input (GOCODE_INPUT, else its first argument, else {}) into
// T, or prints T's JSON Schema and exits when GOCODE_INPUT_SCHEMA is set. output, if given, is
// a value of the type the program hands to result() (its schema is printed beside T's).
func Input[T any](output ...any) T {
	raw := os.Getenv(EnvInput)
	if raw == "" && len(os.Args) > 1 {
		raw = os.Args[1]
	}
	return InputFrom[T](raw, output...)
}

// InputFrom is Input with the input given (a saved program run as a tool carries it in its code).
func InputFrom[T any](raw string, output ...any) T {
	var v T
	if os.Getenv(EnvInputSchema) != "" {
		var doc any = schemaOf(reflect.TypeOf(v), map[reflect.Type]bool{})
		if len(output) > 0 {
			doc = map[string]any{"input": doc, "output": schemaOf(reflect.TypeOf(output[0]), map[reflect.Type]bool{})}
		}
		text, _ := json.Marshal(doc)
		fmt.Println(string(text))
		os.Exit(0)
	}
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

func schemaOf(t reflect.Type, seen map[reflect.Type]bool) map[string]any {
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem(), seen)
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "contentEncoding": "base64"}
		}
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), seen)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), seen)}
	case reflect.Struct:
		if seen[t] {
			return map[string]any{"type": "object"} // a recursive type: its shape once is enough
		}
		seen[t] = true
		defer delete(seen, t)
		props := map[string]any{}
		required := []string{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			s := schemaOf(f.Type, seen)
			if d := f.Tag.Get("desc"); d != "" {
				s["description"] = d
			}
			props[name] = s
			if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") && f.Type.Kind() != reflect.Pointer {
				required = append(required, name)
			}
		}
		out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			out["required"] = required
		}
		return out
	}
	return map[string]any{}
}
