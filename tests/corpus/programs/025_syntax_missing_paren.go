// expect: compile
// error: ^model\.go:2:\d+: syntax error: unexpected newline in argument list; possibly missing comma or \)
w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
fmt.Println("temperature:", w.Temperature
if err != nil {
	return err
}
