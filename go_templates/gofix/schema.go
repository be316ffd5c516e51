package main

import (
	"go/constant"
	"go/types"
	"reflect"
	"sort"
	"strings"
)

// schemasOf describes the named types of a checked package as JSON Schema, read from their
// declarations (go/types), never by running the program: a saved program's Input and Output
// become its tool's schemas without any of its code running. The rules are encoding/json's,
// which decodes the input: json tags name the properties ("-" drops one), omitempty, omitzero or
// a pointer makes one optional, embedded structs without a tag lend their fields, a desc tag
// describes one; a named type with constants of its own type declared beside it is an enum.
// A name the package does not declare as a type is left out of the answer.
func schemasOf(pkg *types.Package, names []string) map[string]any {
	if pkg == nil || len(names) == 0 {
		return nil
	}
	out := map[string]any{}
	for _, name := range names {
		if tn, ok := pkg.Scope().Lookup(name).(*types.TypeName); ok {
			out[name] = schemaOf(tn.Type(), map[types.Type]bool{})
		}
	}
	return out
}

func schemaOf(t types.Type, seen map[types.Type]bool) map[string]any {
	t = types.Unalias(t)
	if named, ok := t.(*types.Named); ok {
		if s := knownType(named); s != nil {
			return s
		}
		if s := enumOf(named); s != nil {
			return s
		}
	}
	switch u := t.Underlying().(type) {
	case *types.Pointer:
		return schemaOf(u.Elem(), seen)
	case *types.Basic:
		return basicSchema(u)
	case *types.Slice:
		if b, ok := types.Unalias(u.Elem()).Underlying().(*types.Basic); ok && b.Kind() == types.Uint8 {
			return map[string]any{"type": "string", "contentEncoding": "base64"} // as encoding/json writes []byte
		}
		return map[string]any{"type": "array", "items": schemaOf(u.Elem(), seen)}
	case *types.Array:
		return map[string]any{"type": "array", "items": schemaOf(u.Elem(), seen)}
	case *types.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(u.Elem(), seen)}
	case *types.Struct:
		if seen[t] {
			return map[string]any{"type": "object"} // a recursive type: its shape once is enough
		}
		seen[t] = true
		defer delete(seen, t)
		props := map[string]any{}
		required := []string{}
		structFields(u, seen, props, &required, map[string]bool{})
		out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			out["required"] = required
		}
		return out
	}
	return map[string]any{} // interfaces, funcs, channels: anything
}

// structFields adds the properties of s; taken holds names an outer struct already gave (an
// outer field hides an embedded one of the same name, as in encoding/json).
func structFields(s *types.Struct, seen map[types.Type]bool, props map[string]any, required *[]string, taken map[string]bool) {
	var embedded []*types.Struct
	for i := 0; i < s.NumFields(); i++ {
		f := s.Field(i)
		tag := reflect.StructTag(s.Tag(i))
		jsonTag := tag.Get("json")
		if jsonTag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(jsonTag, ",")
		if f.Embedded() && name == "" {
			ft := types.Unalias(f.Type())
			if p, ok := ft.Underlying().(*types.Pointer); ok {
				ft = types.Unalias(p.Elem())
			}
			if inner, ok := ft.Underlying().(*types.Struct); ok && !seen[ft] {
				embedded = append(embedded, inner) // after this struct's own fields, which win
				continue
			}
		}
		if !f.Exported() {
			continue
		}
		if name == "" {
			name = f.Name()
		}
		if taken[name] {
			continue
		}
		taken[name] = true
		p := schemaOf(f.Type(), seen)
		if d := tag.Get("desc"); d != "" {
			p["description"] = d
		}
		props[name] = p
		_, pointer := types.Unalias(f.Type()).Underlying().(*types.Pointer)
		if !hasOpt(opts, "omitempty") && !hasOpt(opts, "omitzero") && !pointer {
			*required = append(*required, name)
		}
	}
	for _, inner := range embedded {
		structFields(inner, seen, props, required, taken)
	}
}

func hasOpt(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

func basicSchema(b *types.Basic) map[string]any {
	switch {
	case b.Info()&types.IsBoolean != 0:
		return map[string]any{"type": "boolean"}
	case b.Info()&types.IsInteger != 0 && b.Kind() != types.Uintptr:
		return map[string]any{"type": "integer"}
	case b.Info()&types.IsFloat != 0:
		return map[string]any{"type": "number"}
	case b.Info()&types.IsString != 0:
		return map[string]any{"type": "string"}
	}
	return map[string]any{}
}

// knownType covers standard types whose JSON is not their Go shape: time.Time is an RFC 3339
// string, and a type that decodes itself (json.Unmarshaler) or from text may be anything or a string.
func knownType(named *types.Named) map[string]any {
	obj := named.Obj()
	if obj.Pkg() != nil && obj.Pkg().Path() == "time" && obj.Name() == "Time" {
		return map[string]any{"type": "string", "format": "date-time"}
	}
	methods := types.NewMethodSet(types.NewPointer(named))
	has := func(name string) bool { return methods.Lookup(named.Obj().Pkg(), name) != nil }
	if has("UnmarshalJSON") {
		return map[string]any{}
	}
	if has("UnmarshalText") {
		return map[string]any{"type": "string"}
	}
	return nil
}

// enumOf lists the constants of a named string or number type declared beside it, in the
// order they are declared; nil when it has none. Only the program's own types and the tools'
// enums: a library's constants (time.Second) name some values, not all of them.
func enumOf(named *types.Named) map[string]any {
	b, ok := named.Underlying().(*types.Basic)
	pkg := named.Obj().Pkg()
	if !ok || pkg == nil || b.Info()&(types.IsString|types.IsInteger|types.IsFloat) == 0 {
		return nil
	}
	if pkg.Path() != "main" && !strings.HasPrefix(pkg.Path(), toolsPathPrefix) {
		return nil
	}
	scope := pkg.Scope()
	var consts []*types.Const
	for _, name := range scope.Names() {
		if c, ok := scope.Lookup(name).(*types.Const); ok && types.Identical(c.Type(), named) {
			consts = append(consts, c)
		}
	}
	if len(consts) == 0 {
		return nil
	}
	sort.Slice(consts, func(i, j int) bool { return consts[i].Pos() < consts[j].Pos() })
	values := []any{}
	have := map[string]bool{}
	for _, c := range consts {
		var v any
		switch c.Val().Kind() {
		case constant.String:
			v = constant.StringVal(c.Val())
		case constant.Int:
			n, exact := constant.Int64Val(c.Val())
			if !exact {
				return nil
			}
			v = n
		case constant.Float:
			f, _ := constant.Float64Val(c.Val())
			v = f
		default:
			return nil
		}
		if key := c.Val().ExactString(); !have[key] {
			have[key] = true
			values = append(values, v)
		}
	}
	s := basicSchema(b)
	s["enum"] = values
	return s
}
