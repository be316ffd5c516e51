// expect: ok
// output: Tokyo Oslo Paris
// output: empty: true
type Stack[T any] struct {
	items []T
}

func (s *Stack[T]) Push(v T) { s.items = append(s.items, v) }

func (s *Stack[T]) Pop() (T, bool) {
	var zero T
	if len(s.items) == 0 {
		return zero, false
	}
	v := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return v, true
}

var s Stack[string]
for _, c := range []string{"Paris", "Oslo", "Tokyo"} {
	s.Push(c)
}
var out []string
for {
	v, ok := s.Pop()
	if !ok {
		break
	}
	out = append(out, v)
}
fmt.Println(strings.Join(out, " "))
_, ok := s.Pop()
fmt.Println("empty:", !ok)
