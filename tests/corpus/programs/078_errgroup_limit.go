// expect: ok
// output: 5 cities, 3 sunny
g, gctx := errgroup.WithContext(ctx)
g.SetLimit(2)
cities := []string{"Paris", "Tokyo", "New York", "Nairobi", "Oslo"}
var mu sync.Mutex
sunny := 0
for _, c := range cities {
	g.Go(func() error {
		w, err := getWeather(gctx, GetWeatherInput{City: c})
		if err != nil {
			return err
		}
		if w.Conditions == "sunny" {
			mu.Lock()
			sunny++
			mu.Unlock()
		}
		return nil
	})
}
if err := g.Wait(); err != nil {
	return err
}
fmt.Printf("%d cities, %d sunny\n", len(cities), sunny)
