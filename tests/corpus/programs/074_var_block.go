// expect: ok
// output: Paris:sunny Oslo:cloudy
var (
	cities = []string{"Paris", "Oslo"}
	sep    = " "
)
var parts []string
for _, c := range cities {
	w, err := getWeather(ctx, GetWeatherInput{City: c})
	if err != nil {
		return err
	}
	parts = append(parts, c+":"+w.Conditions)
}
fmt.Println(strings.Join(parts, sep))
