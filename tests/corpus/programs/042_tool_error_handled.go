// expect: ok
// output-re: ^lookup failed: .*unknown city 'Atlantis'.*\n$
_, err := getWeather(ctx, GetWeatherInput{City: "Atlantis"})
if err != nil {
	fmt.Println("lookup failed:", err)
	return nil
}
fmt.Println("unexpected success")
