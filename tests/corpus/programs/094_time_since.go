// expect: ok
// output: fetched Tokyo
// stderr-re: took \d
start := time.Now()
if _, err := getWeather(ctx, GetWeatherInput{City: "Tokyo"}); err != nil {
	return err
}
fmt.Println("fetched Tokyo")
fmt.Fprintf(os.Stderr, "took %v\n", time.Since(start).Round(time.Millisecond))
