// expect: ok
// output: timeout 5s, retries 3
// output: Oslo 39.2
const (
	timeout    = 5 * time.Second
	maxRetries = 3
)

func withRetry(ctx context.Context, city string) (GetWeatherOutput, error) {
	var lastErr error
	for i := 0; i < maxRetries; i++ {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		w, err := getWeather(cctx, GetWeatherInput{City: city, Unit: UnitFahrenheit})
		cancel()
		if err == nil {
			return w, nil
		}
		lastErr = err
	}
	return GetWeatherOutput{}, lastErr
}

fmt.Printf("timeout %v, retries %d\n", timeout, maxRetries)
w, err := withRetry(ctx, "Oslo")
if err != nil {
	return err
}
fmt.Println("Oslo", w.Temperature)
