// expect: ok
// output: New York cloudy
tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
defer cancel()
w, err := getWeather(tctx, GetWeatherInput{City: "New York"})
if err != nil {
	return fmt.Errorf("weather: %w", err)
}
fmt.Println("New York", w.Conditions)
