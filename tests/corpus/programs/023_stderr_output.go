// expect: ok
// output: result: 2 cities
// stderr-re: warning: skipping Atlantis
found := 0
for _, c := range []string{"Paris", "Atlantis", "Oslo"} {
	if _, err := getWeather(ctx, GetWeatherInput{City: c}); err != nil {
		fmt.Fprintf(os.Stderr, "warning: skipping %s: %v\n", c, err)
		continue
	}
	found++
}
fmt.Printf("result: %d cities\n", found)
