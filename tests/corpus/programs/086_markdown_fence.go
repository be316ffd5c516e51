// expect: ok
// output: Paris: 18.5
```go
w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
if err != nil {
	return err
}
fmt.Printf("Paris: %.1f\n", w.Temperature)
```
