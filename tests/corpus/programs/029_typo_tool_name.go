// expect: compile
// error: ^model\.go:1:11: undefined: getWether \(did you mean getWeather\?\)
// error: func getWeather\(context\.Context, GetWeatherInput\) \(GetWeatherOutput, error\)
w, err := getWether(ctx, GetWeatherInput{City: "Paris"})
if err != nil {
	return err
}
fmt.Println(w.Temperature)
