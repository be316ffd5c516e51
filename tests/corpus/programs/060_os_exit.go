// expect: runtime
// output: checking
// error: threshold exceeded
fmt.Println("checking")
w, err := getWeather(ctx, GetWeatherInput{City: "Nairobi"})
if err != nil {
	return err
}
if w.Temperature > 20 {
	fmt.Fprintln(os.Stderr, "threshold exceeded")
	os.Exit(3)
}
