// expect: ok
// output: [Paris] 18.5°C
// output: [Oslo] 4.0°C
type Place struct {
	Name string
}

type Report struct {
	Place
	Celsius float64
}

func (r Report) String() string {
	return fmt.Sprintf("[%s] %.1f°C", r.Name, r.Celsius)
}

var reports []fmt.Stringer
for _, c := range []string{"Paris", "Oslo"} {
	w, err := getWeather(ctx, GetWeatherInput{City: c})
	if err != nil {
		return err
	}
	reports = append(reports, Report{Place{c}, w.Temperature})
}
for _, r := range reports {
	fmt.Println(r)
}
