// expect: ok
// output: Paris 18.5 sunny
c := must(getCity(ctx))
w := must(getWeather(ctx, GetWeatherInput{City: c.City}))
fmt.Println(c.City, w.Temperature, w.Conditions)
