// expect: ok
// output: 59
package main

import "fmt"

w, err := getWeather(ctx, GetWeatherInput{City: "New York", Unit: UnitFahrenheit})
if err != nil {
	return err
}
fmt.Println(w.Temperature)
