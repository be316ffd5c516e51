// expect: ok
// output-re: ^2 errors$
// output-re: unknown city 'Atlantis'
var errs []error
for _, c := range []string{"Atlantis", "Paris", "Gotham"} {
	if _, err := getWeather(ctx, GetWeatherInput{City: c}); err != nil {
		errs = append(errs, err)
	}
}
fmt.Println(len(errs), "errors")
fmt.Println(errors.Join(errs...))
