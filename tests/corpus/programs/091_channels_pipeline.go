// expect: ok
// output: 4 readings, mean 14.9
type reading struct {
	city string
	temp float64
	err  error
}

cities := []string{"Paris", "Tokyo", "New York", "Oslo"}
ch := make(chan reading)
for _, c := range cities {
	go func(city string) {
		w, err := getWeather(ctx, GetWeatherInput{City: city})
		ch <- reading{city, w.Temperature, err}
	}(c)
}
sum := 0.0
n := 0
for range cities {
	r := <-ch
	if r.err != nil {
		return r.err
	}
	sum += r.temp
	n++
}
fmt.Printf("%d readings, mean %.1f\n", n, sum/float64(n))
