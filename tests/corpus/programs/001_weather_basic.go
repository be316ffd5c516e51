// expect: ok
// output: City: Paris
// output: Weather: 65.3°F, sunny
city, err := getCity(ctx)
if err != nil {
	return err
}
weather, err := getWeather(ctx, GetWeatherInput{City: city.City, Unit: UnitFahrenheit})
if err != nil {
	return err
}
fmt.Println("City:", city.City)
fmt.Printf("Weather: %.1f°F, %s\n", weather.Temperature, weather.Conditions)
