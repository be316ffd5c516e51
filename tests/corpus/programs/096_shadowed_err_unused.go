// expect: compile
// error: ^model\.go:3:\d+: declared and not used: w2
w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
if err == nil {
	w2, err := getWeather(ctx, GetWeatherInput{City: "Oslo"})
	if err != nil {
		return err
	}
}
fmt.Println(w.Temperature)
