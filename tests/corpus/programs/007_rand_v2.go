// expect: ok
// output: in range: true
// output: dice ok: true
n := rand.IntN(10)
fmt.Println("in range:", n >= 0 && n < 10)
d := rand.N(6) + 1
fmt.Println("dice ok:", d >= 1 && d <= 6)
