// expect: ok
// output: Oslo: 4.0°C (cold)
// output: Paris: 18.5°C (mild)
// output: Nairobi: 24.5°C (warm)
type Reading struct {
	City string
	Temp float64
}

func (r Reading) Label() string {
	switch {
	case r.Temp < 10:
		return "cold"
	case r.Temp < 20:
		return "mild"
	default:
		return "warm"
	}
}

func fetch(ctx context.Context, city string) (Reading, error) {
	w, err := getWeather(ctx, GetWeatherInput{City: city, Unit: UnitCelsius})
	if err != nil {
		return Reading{}, err
	}
	return Reading{City: city, Temp: w.Temperature}, nil
}

for _, c := range []string{"Oslo", "Paris", "Nairobi"} {
	r, err := fetch(ctx, c)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %.1f°C (%s)\n", r.City, r.Temp, r.Label())
}
