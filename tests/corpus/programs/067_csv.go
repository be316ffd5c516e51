// expect: ok
// output: city,temperature,conditions
// output: Paris,18.5,sunny
// output: New York,15.0,cloudy
w := csv.NewWriter(os.Stdout)
w.Write([]string{"city", "temperature", "conditions"})
for _, c := range []string{"Paris", "New York"} {
	r, err := getWeather(ctx, GetWeatherInput{City: c})
	if err != nil {
		return err
	}
	w.Write([]string{c, strconv.FormatFloat(r.Temperature, 'f', 1, 64), r.Conditions})
}
w.Flush()
return w.Error()
