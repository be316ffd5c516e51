// expect: ok
// output: celsius: 18.5
// output: fahrenheit: 65.3
type Formatter interface {
	Format(t float64) string
}

type plain struct{ unit string }

func (p plain) Format(t float64) string { return fmt.Sprintf("%s: %.1f", p.unit, t) }

var formatters = map[Unit]Formatter{
	UnitCelsius:    plain{"celsius"},
	UnitFahrenheit: plain{"fahrenheit"},
}

func show(ctx context.Context, u Unit) error {
	w, err := getWeather(ctx, GetWeatherInput{City: "Paris", Unit: u})
	if err != nil {
		return err
	}
	fmt.Println(formatters[u].Format(w.Temperature))
	return nil
}

for _, u := range []Unit{UnitCelsius, UnitFahrenheit} {
	if err := show(ctx, u); err != nil {
		return err
	}
}
