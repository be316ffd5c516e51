// expect: ok
// output: New York: 15.0
// output: Oslo: 4.0
// output: Paris: 18.5
// output: Tokyo: 22.0
cities := []string{"Paris", "Tokyo", "New York", "Oslo"}
var (
	mu      sync.Mutex
	wg      sync.WaitGroup
	results = map[string]float64{}
)
for _, c := range cities {
	wg.Add(1)
	go func(city string) {
		defer wg.Done()
		w, err := getWeather(ctx, GetWeatherInput{City: city})
		if err != nil {
			log.Printf("%s: %v", city, err)
			return
		}
		mu.Lock()
		results[city] = w.Temperature
		mu.Unlock()
	}(c)
}
wg.Wait()
keys := make([]string, 0, len(results))
for k := range results {
	keys = append(keys, k)
}
sort.Strings(keys)
for _, k := range keys {
	fmt.Printf("%s: %.1f\n", k, results[k])
}
