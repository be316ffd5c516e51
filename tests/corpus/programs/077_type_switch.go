// expect: ok
// output: int 42
// output: string "hi"
// output: float64 2.5
// output: other []int
describe := func(v any) string {
	switch x := v.(type) {
	case int:
		return fmt.Sprintf("int %d", x)
	case string:
		return fmt.Sprintf("string %q", x)
	case float64:
		return fmt.Sprintf("float64 %g", x)
	default:
		return fmt.Sprintf("other %T", x)
	}
}
for _, v := range []any{42, "hi", 2.5, []int{1}} {
	fmt.Println(describe(v))
}
