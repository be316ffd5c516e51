// expect: compile
// error: ^model\.go:3:\d+: not enough return values
w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
if err != nil {
	return
}
fmt.Println(w.Temperature)
