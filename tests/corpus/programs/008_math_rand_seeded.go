// expect: ok
// output: same: true
r1 := rand.New(rand.NewSource(42))
r2 := rand.New(rand.NewSource(42))
a := r1.Intn(1000)
b := r2.Intn(1000)
fmt.Println("same:", a == b)
