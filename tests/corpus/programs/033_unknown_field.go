// expect: compile
// error: ^model\.go:1:\d+: unknown field Units in struct literal of type GetWeatherInput
// error: type GetWeatherInput struct
w, err := getWeather(ctx, GetWeatherInput{City: "Paris", Units: "fahrenheit"})
if err != nil {
	return err
}
fmt.Println(w.Temperature)
