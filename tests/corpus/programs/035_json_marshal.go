// expect: ok
// output: {"temperature":18.5,"unit":"celsius","conditions":"sunny"}
w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
if err != nil {
	return err
}
b, err := json.Marshal(w)
if err != nil {
	return err
}
fmt.Println(string(b))
