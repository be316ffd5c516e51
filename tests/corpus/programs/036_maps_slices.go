// expect: ok
// output: [Nairobi New York Oslo Paris Tokyo]
// output: warmest: Nairobi
temps := map[string]float64{"Paris": 18.5, "Tokyo": 22, "New York": 15, "Nairobi": 24.5, "Oslo": 4}
names := slices.Sorted(maps.Keys(temps))
fmt.Println(names)
warmest := slices.MaxFunc(names, func(a, b string) int { return cmp.Compare(temps[a], temps[b]) })
fmt.Println("warmest:", warmest)
