// expect: ok
// output: Tokyo sunny
var w, err = getWeather(ctx, GetWeatherInput{City: "Tokyo"})
if err != nil {
	return err
}
fmt.Println("Tokyo", w.Conditions)
