// expect: compile
// error: undefined: get_weather \(did you mean getWeather\?\)
// error: type GetWeatherInput struct
w, err := get_weather(ctx, GetWeatherInput{City: "Paris"})
if err != nil {
	return err
}
fmt.Println(w.Conditions)
