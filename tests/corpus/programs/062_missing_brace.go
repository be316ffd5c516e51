// expect: compile
// error: ^model\.go:1:45: syntax error: this \{ is never closed
for _, c := range []string{"Paris", "Oslo"} {
	w, err := getWeather(ctx, GetWeatherInput{City: c})
	if err != nil {
		return err
	}
	fmt.Println(c, w.Temperature)
