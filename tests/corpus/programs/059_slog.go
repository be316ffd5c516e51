// expect: ok
// output: ok
// stderr-re: level=INFO msg="fetched weather" city=Oslo
logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
w, err := getWeather(ctx, GetWeatherInput{City: "Oslo"})
if err != nil {
	return err
}
logger.Info("fetched weather", "city", "Oslo", "temp", w.Temperature)
fmt.Println("ok")
