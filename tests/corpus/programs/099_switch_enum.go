// expect: ok
// output: Paris 18.5 C
w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
if err != nil {
	return err
}
var sym string
switch w.Unit {
case UnitCelsius:
	sym = "C"
case UnitFahrenheit:
	sym = "F"
default:
	sym = "?"
}
fmt.Println("Paris", w.Temperature, sym)
