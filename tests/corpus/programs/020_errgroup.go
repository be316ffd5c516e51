// expect: ok
// output: Nairobi=76.1 Oslo=39.2 Tokyo=71.6
import "golang.org/x/sync/errgroup"

cities := []string{"Tokyo", "Oslo", "Nairobi"}
temps := make([]float64, len(cities))
g, gctx := errgroup.WithContext(ctx)
for i, city := range cities {
	g.Go(func() error {
		w, err := getWeather(gctx, GetWeatherInput{City: city, Unit: UnitFahrenheit})
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
parts := []string{}
for i, c := range cities {
	parts = append(parts, fmt.Sprintf("%s=%.1f", c, temps[i]))
}
slices.Sort(parts)
fmt.Println(strings.Join(parts, " "))
