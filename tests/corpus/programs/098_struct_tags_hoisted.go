// expect: ok
// output: {"city":"Paris","temp_f":65.3,"sunny":true}
type Summary struct {
	City  string  `json:"city"`
	TempF float64 `json:"temp_f"`
	Sunny bool    `json:"sunny"`
}

w, err := getWeather(ctx, GetWeatherInput{City: "Paris", Unit: UnitFahrenheit})
if err != nil {
	return err
}
s := Summary{City: "Paris", TempF: w.Temperature, Sunny: w.Conditions == "sunny"}
b, _ := json.Marshal(s)
fmt.Println(string(b))
