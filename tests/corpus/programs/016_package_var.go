// expect: ok
// output: calls: 3
// output: cache hits: 1
var cache = map[string]GetWeatherOutput{}
var calls int

func cachedWeather(ctx context.Context, city string) (GetWeatherOutput, error) {
	calls++
	if w, ok := cache[city]; ok {
		return w, nil
	}
	w, err := getWeather(ctx, GetWeatherInput{City: city})
	if err != nil {
		return GetWeatherOutput{}, err
	}
	cache[city] = w
	return w, nil
}

for _, c := range []string{"Paris", "Tokyo", "Paris"} {
	if _, err := cachedWeather(ctx, c); err != nil {
		return err
	}
}
fmt.Println("calls:", calls)
fmt.Println("cache hits:", calls-len(cache))
