// expect: ok
// output: 5 5
cities := []string{"Paris", "Tokyo", "New York", "Nairobi", "Oslo"}
rand.Shuffle(len(cities), func(i, j int) { cities[i], cities[j] = cities[j], cities[i] })
p := rand.Perm(5)
fmt.Println(len(cities), len(p))
