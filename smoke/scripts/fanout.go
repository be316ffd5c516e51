// Goroutines: five weather calls at once, collected in a fixed order.
cities := []string{"Paris", "Tokyo", "New York", "Nairobi", "Oslo"}
temps := make([]float64, len(cities))
g, ctx := errgroup.WithContext(ctx)
for i, c := range cities {
	g.Go(func() error {
		w, err := getWeather(ctx, GetWeatherInput{City: c})
		if err != nil {
			return err
		}
		temps[i] = w.Temperature
		return nil
	})
}
if err := g.Wait(); err != nil {
	return err
}
for i, c := range cities {
	fmt.Printf("%s %.1f\n", c, temps[i])
}
