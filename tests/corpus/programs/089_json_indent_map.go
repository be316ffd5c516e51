// expect: ok
// output: {
// output:   "Oslo": "cloudy",
// output:   "Paris": "sunny"
// output: }
summary := map[string]string{}
for _, city := range []string{"Paris", "Oslo"} {
	w, err := getWeather(ctx, GetWeatherInput{City: city})
	if err != nil {
		return fmt.Errorf("weather for %s: %w", city, err)
	}
	summary[city] = w.Conditions
}
out, _ := json.MarshalIndent(summary, "", "  ")
fmt.Println(string(out))
