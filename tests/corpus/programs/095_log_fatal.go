// expect: runtime
// error: could not get weather for Gotham
w, err := getWeather(ctx, GetWeatherInput{City: "Gotham"})
if err != nil {
	log.Fatalf("could not get weather for Gotham: %v", err)
}
fmt.Println(w)
