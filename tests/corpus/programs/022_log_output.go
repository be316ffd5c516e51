// expect: ok
// output: done
// stderr-re: fetching Paris
log.SetFlags(0)
log.Println("fetching Paris")
if _, err := getWeather(ctx, GetWeatherInput{City: "Paris"}); err != nil {
	return err
}
fmt.Println("done")
