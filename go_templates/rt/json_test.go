package rt

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// A union as the bindings generate it: one pointer field per alternative.
type testUnion struct {
	Str   *string
	Int   *int64
	Point *testPoint
	Named *testNamed
}

type testPoint struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

type testNamed struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

func (u *testUnion) decode(data string) error {
	return DecodeUnion([]byte(data), "Shape",
		Branch{Kind: "string", Target: &u.Str},
		Branch{Kind: "integer", Target: &u.Int},
		Branch{Kind: "object", Required: []string{"kind"}, Consts: map[string]string{"kind": `"named"`}, Target: &u.Named},
		Branch{Kind: "object", Required: []string{"x", "y"}, Target: &u.Point},
	)
}

func TestDecodeUnion(t *testing.T) {
	str, i := "north", int64(3)
	tests := []struct {
		data    string
		want    testUnion
		wantErr string
	}{
		{`"north"`, testUnion{Str: &str}, ""},
		{`3`, testUnion{Int: &i}, ""},
		{`3.5`, testUnion{}, "Shape: the value 3.5 matches none of its alternatives"},
		{`{"x":1,"y":2}`, testUnion{Point: &testPoint{1, 2}}, ""},
		{`{"x":1,"y":2,"z":3}`, testUnion{Point: &testPoint{1, 2}}, ""}, // unknown keys, second pass
		{`{"kind":"named","name":"n"}`, testUnion{Named: &testNamed{"named", "n"}}, ""},
		{`{"kind":"other","name":"n"}`, testUnion{}, "matches none"}, // the constant decides
		{`{"z":1}`, testUnion{}, "matches none"},                     // nothing in common with any struct
		{`null`, testUnion{}, ""},
		{`true`, testUnion{}, "matches none"},
	}
	for _, tt := range tests {
		var got testUnion
		err := got.decode(tt.data)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("DecodeUnion(%s) error = %v, want %q", tt.data, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("DecodeUnion(%s) = %+v, %v; want %+v", tt.data, got, err, tt.want)
		}
	}
}

func TestEncodeUnion(t *testing.T) {
	s := "a"
	n := int64(1)
	tests := []struct {
		fields  []any
		want    string
		wantErr string
	}{
		{[]any{(*string)(nil), (*int64)(nil)}, "null", ""},
		{[]any{&s, (*int64)(nil)}, `"a"`, ""},
		{[]any{(*string)(nil), &n}, `1`, ""},
		{[]any{&s, &n}, "", "Shape: 2 fields are set; set exactly one"},
	}
	for _, tt := range tests {
		got, err := EncodeUnion("Shape", tt.fields...)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("EncodeUnion error = %v, want %q", err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("EncodeUnion = %s, %v; want %s", got, err, tt.want)
		}
	}
}

func TestTuples(t *testing.T) {
	raw, err := EncodeTuple([]bool{true}, "a", 2)
	if err != nil || string(raw) != `["a",2,true]` {
		t.Fatalf("EncodeTuple = %s, %v", raw, err)
	}
	tests := []struct {
		data     string
		withRest bool
		wantErr  string
	}{
		{`["a",2,true,false]`, true, ""},
		{`["a",2]`, false, ""},
		{`null`, false, ""},
		{`["a",2,true]`, false, "Pair: 3 items, at most 2 allowed"},
		{`[1,2]`, false, "Pair item 0"},
		{`{"a":1}`, false, "Pair: json"},
	}
	for _, tt := range tests {
		var s string
		var n int
		var rest []bool
		var restPtr any
		if tt.withRest {
			restPtr = &rest
		}
		err := DecodeTuple([]byte(tt.data), "Pair", restPtr, &s, &n)
		if tt.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("DecodeTuple(%s) error = %v, want %q", tt.data, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("DecodeTuple(%s): %v", tt.data, err)
		}
		if tt.data != "null" && (s != "a" || n != 2) {
			t.Errorf("DecodeTuple(%s) = %q, %d", tt.data, s, n)
		}
		if tt.withRest && !reflect.DeepEqual(rest, []bool{true, false}) {
			t.Errorf("DecodeTuple(%s) rest = %v", tt.data, rest)
		}
	}
}

func TestExpandRefs(t *testing.T) {
	t.Setenv("GOCODE_TEST_SET", "v1")
	os.Unsetenv("GOCODE_TEST_UNSET")
	tests := []struct {
		in        any
		want      any
		wantUnset string
	}{
		{"${GOCODE_TEST_SET}", "v1", ""},
		{"Bearer ${GOCODE_TEST_SET}!", "Bearer v1!", ""},
		{"${GOCODE_TEST_UNSET:-fallback}", "fallback", ""},
		{"${GOCODE_TEST_UNSET}", "", "GOCODE_TEST_UNSET"},
		{[]any{"${GOCODE_TEST_SET}", 1.0}, []any{"v1", 1.0}, ""},
		{map[string]any{"env": map[string]any{"K": "${GOCODE_TEST_SET}"}}, map[string]any{"env": map[string]any{"K": "v1"}}, ""},
		{"$GOCODE_TEST_SET", "$GOCODE_TEST_SET", ""}, // only the braced form is a reference
	}
	for _, tt := range tests {
		got, unset := expandRefs(tt.in)
		if unset != tt.wantUnset || (tt.wantUnset == "" && !reflect.DeepEqual(got, tt.want)) {
			t.Errorf("expandRefs(%v) = %v, %q; want %v, %q", tt.in, got, unset, tt.want, tt.wantUnset)
		}
	}
}
