// A tool error reaches the program as a Go error, and a returned error fails the run.
// want-error: runtime unknown city 'Atlantis'
_, err := getWeather(ctx, GetWeatherInput{City: "Atlantis"})
return err
