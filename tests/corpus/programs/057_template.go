// expect: ok
// output: Paris is sunny at 18.5 degrees
w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
if err != nil {
	return err
}
tmpl := template.Must(template.New("r").Parse("{{.City}} is {{.W.Conditions}} at {{.W.Temperature}} degrees\n"))
return tmpl.Execute(os.Stdout, map[string]any{"City": "Paris", "W": w})
