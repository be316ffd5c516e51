// expect: ok
// output: 1.41 3 -Inf
fmt.Printf("%.2f %v %v\n", math.Sqrt(2), math.Round(2.5), math.Inf(-1))
