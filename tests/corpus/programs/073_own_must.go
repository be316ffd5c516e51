// expect: ok
// output: Tokyo 71.6
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

w := must(getWeather(ctx, GetWeatherInput{City: "Tokyo", Unit: UnitFahrenheit}))
fmt.Println("Tokyo", w.Temperature)
