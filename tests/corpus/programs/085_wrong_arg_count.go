// expect: compile
// error: ^model\.go:1:\d+: not enough arguments in call to getWeather
w, err := getWeather(GetWeatherInput{City: "Paris"})
if err != nil {
	return err
}
fmt.Println(w)
