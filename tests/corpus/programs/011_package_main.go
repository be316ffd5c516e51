// expect: ok
// output: Tokyo: 22.0°C sunny
package main

import (
	"context"
	"fmt"
	"log"
)

func main() {
	ctx := context.Background()
	w, err := getWeather(ctx, GetWeatherInput{City: "Tokyo", Unit: UnitCelsius})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Tokyo: %.1f°C %s\n", w.Temperature, w.Conditions)
}
