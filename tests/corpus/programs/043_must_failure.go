// expect: runtime
// output: start
// error: ^error: model\.go:2: .*unknown city 'Atlantis'
fmt.Println("start")
w := must(getWeather(ctx, GetWeatherInput{City: "Atlantis"}))
fmt.Println(w.Temperature)
