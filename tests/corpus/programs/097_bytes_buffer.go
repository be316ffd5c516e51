// expect: ok
// output: Paris=sunny;Tokyo=sunny;
var buf bytes.Buffer
for _, c := range []string{"Paris", "Tokyo"} {
	w, err := getWeather(ctx, GetWeatherInput{City: c})
	if err != nil {
		return err
	}
	fmt.Fprintf(&buf, "%s=%s;", c, w.Conditions)
}
fmt.Println(buf.String())
