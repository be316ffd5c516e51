// expect: compile
// error: undefined: UnitKelvin
// error: type Unit string
w, err := getWeather(ctx, GetWeatherInput{City: "Paris", Unit: UnitKelvin})
if err != nil {
	return err
}
fmt.Println(w.Temperature)
