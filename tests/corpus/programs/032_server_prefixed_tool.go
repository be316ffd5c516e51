// expect: compile
// error: undefined: weather \(did you mean getWeather \(weather\.get_weather\)\?\)
res, err := weather.getWeather(ctx, GetWeatherInput{City: "Oslo"})
if err != nil {
	return err
}
fmt.Println(res.Temperature)
