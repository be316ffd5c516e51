package rt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// A Branch is one alternative of a generated union type: the JSON kind it accepts
// ("string", "integer", "number", "boolean", "array" or "object"), for objects the keys it
// requires and the values some keys must have (compact JSON), and a pointer to the union's
// field that receives the value.
type Branch struct {
	Kind     string
	Required []string
	Consts   map[string]string
	Target   any
}

// EncodeUnion encodes the one non-nil field of a union (null when none is set).
func EncodeUnion(name string, fields ...any) ([]byte, error) {
	var set any
	n := 0
	for _, f := range fields {
		if !isNil(f) {
			set = f
			n++
		}
	}
	switch n {
	case 0:
		return []byte("null"), nil
	case 1:
		return json.Marshal(set)
	default:
		return nil, fmt.Errorf("%s: %d fields are set; set exactly one", name, n)
	}
}

// DecodeUnion decodes data into the first branch that accepts it: matching JSON kind, for
// objects the required keys and constant values present; object branches are tried first
// rejecting unknown keys, then allowing them. null leaves every field nil.
func DecodeUnion(data []byte, name string, branches ...Branch) error {
	data = bytes.TrimSpace(data)
	kind := jsonKind(data)
	if kind == "null" {
		return nil
	}
	var obj map[string]json.RawMessage
	if kind == "object" {
		if err := json.Unmarshal(data, &obj); err != nil {
			return err
		}
	}
	for _, strict := range []bool{true, false} {
		for _, b := range branches {
			if !kindMatches(b.Kind, kind, data) || (kind == "object" && !objectMatches(b, obj)) {
				continue
			}
			if kind != "object" && !strict {
				continue // non-objects were fully tried in the first pass
			}
			if !strict && !sharesKey(b.Target, obj) {
				continue // an unknown object is not taken for a struct it has nothing in common with
			}
			if decodeInto(data, b.Target, strict && kind == "object") == nil {
				return nil
			}
		}
	}
	return fmt.Errorf("%s: the value %s matches none of its alternatives", name, clip(string(data)))
}

// EncodeTuple encodes positional fields, then the elements of rest (a slice or nil), as one array.
func EncodeTuple(rest any, items ...any) ([]byte, error) {
	all := append([]any{}, items...)
	if rv := reflect.ValueOf(rest); rest != nil && rv.Kind() == reflect.Slice {
		for i := 0; i < rv.Len(); i++ {
			all = append(all, rv.Index(i).Interface())
		}
	}
	return json.Marshal(all)
}

// DecodeTuple decodes a JSON array into positional fields (pointers), the elements past them
// into rest (a pointer to a slice, or nil when the tuple allows no more).
func DecodeTuple(data []byte, name string, rest any, items ...any) error {
	if jsonKind(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for i, elem := range raw {
		if i < len(items) {
			if err := json.Unmarshal(elem, items[i]); err != nil {
				return fmt.Errorf("%s item %d: %w", name, i, err)
			}
			continue
		}
		if rest == nil {
			return fmt.Errorf("%s: %d items, at most %d allowed", name, len(raw), len(items))
		}
		restVal := reflect.ValueOf(rest).Elem()
		elemPtr := reflect.New(restVal.Type().Elem())
		if err := json.Unmarshal(elem, elemPtr.Interface()); err != nil {
			return fmt.Errorf("%s item %d: %w", name, i, err)
		}
		restVal.Set(reflect.Append(restVal, elemPtr.Elem()))
	}
	return nil
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

func jsonKind(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	switch c := data[0]; {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	default:
		return "number"
	}
}

// kindMatches: an integer-valued number (1, 1.0, 1e3) is accepted by integer branches too.
func kindMatches(want, got string, data []byte) bool {
	if want == got {
		return true
	}
	if want == "integer" && got == "number" {
		var f float64
		return json.Unmarshal(data, &f) == nil && f == math.Trunc(f)
	}
	return false
}

func objectMatches(b Branch, obj map[string]json.RawMessage) bool {
	for _, k := range b.Required {
		if _, ok := obj[k]; !ok {
			return false
		}
	}
	for k, want := range b.Consts {
		var got bytes.Buffer
		if json.Compact(&got, obj[k]) != nil || got.String() != want {
			return false
		}
	}
	return true
}

// sharesKey reports whether obj has a key the target's struct declares (true for targets
// that are not plain structs: maps, unions, tuples).
func sharesKey(target any, obj map[string]json.RawMessage) bool {
	t := reflect.TypeOf(target).Elem()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return true
	}
	tagged := false
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		tagged = true
		if _, ok := obj[name]; ok {
			return true
		}
	}
	return !tagged
}

// decodeInto decodes into a fresh value of the target's type and stores it only on success,
// so that a failed attempt leaves no half-filled field behind.
func decodeInto(data []byte, target any, strict bool) error {
	tv := reflect.ValueOf(target).Elem()
	fresh := reflect.New(tv.Type())
	dec := json.NewDecoder(bytes.NewReader(data))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(fresh.Interface()); err != nil {
		return err
	}
	tv.Set(fresh.Elem())
	return nil
}
