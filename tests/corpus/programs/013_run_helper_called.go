// expect: ok
// output: Nairobi 24.5
func run(ctx context.Context) error {
	w, err := getWeather(ctx, GetWeatherInput{City: "Nairobi"})
	if err != nil {
		return err
	}
	fmt.Println("Nairobi", w.Temperature)
	return nil
}

return run(ctx)
