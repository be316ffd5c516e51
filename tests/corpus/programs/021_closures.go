// expect: ok
// output: 1 2 3
// output: 10 20
counter := func() func() int {
	n := 0
	return func() int {
		n++
		return n
	}
}
next := counter()
fmt.Println(next(), next(), next())
scale := func(k int) func(int) int { return func(x int) int { return x * k } }
byTen := scale(10)
fmt.Println(byTen(1), byTen(2))
