// expect: ok
// output: PARIS|18.5
import (
	str "strings"
	sc "strconv"
)

w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
if err != nil {
	return err
}
fmt.Println(str.ToUpper("paris") + "|" + sc.FormatFloat(w.Temperature, 'f', -1, 64))
