// expect: runtime
// error: ^error: model\.go:6: .*unknown city 'Gotham'
var wg sync.WaitGroup
for _, c := range []string{"Gotham"} {
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := must(getWeather(ctx, GetWeatherInput{City: c}))
		fmt.Println(w.Temperature)
	}()
}
wg.Wait()
