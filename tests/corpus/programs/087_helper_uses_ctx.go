// expect: compile
// error: ^model\.go:2:\d+: undefined: ctx \(ctx is Run's parameter
func temp(city string) float64 {
	w, _ := getWeather(ctx, GetWeatherInput{City: city})
	return w.Temperature
}

fmt.Println(temp("Paris"))
