// expect: runtime
// error: ^error: too cold in Oslo: 4\.0°C
w, err := getWeather(ctx, GetWeatherInput{City: "Oslo"})
if err != nil {
	return err
}
if w.Temperature < 10 {
	return fmt.Errorf("too cold in Oslo: %.1f°C", w.Temperature)
}
fmt.Println("fine")
