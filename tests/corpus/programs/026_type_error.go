// expect: compile
// error: ^model\.go:6:\d+: cannot use w\.Temperature \(variable of type float64\) as int value in assignment
w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
if err != nil {
	return err
}
var t int
t = w.Temperature
fmt.Println(t)
