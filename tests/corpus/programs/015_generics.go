// expect: ok
// output: [2 4 6]
// output: [Paris Tokyo]
// output: 12
func Map[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

func Filter[T any](xs []T, keep func(T) bool) []T {
	var out []T
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

type Number interface {
	~int | ~float64
}

func Sum[T Number](xs []T) T {
	var s T
	for _, x := range xs {
		s += x
	}
	return s
}

fmt.Println(Map([]int{1, 2, 3}, func(x int) int { return x * 2 }))
fmt.Println(Filter([]string{"Paris", "Oslo", "Tokyo"}, func(s string) bool { return len(s) == 5 }))
fmt.Println(Sum([]int{3, 4, 5}))
