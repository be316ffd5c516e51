// expect: ok
// output: warmest: Nairobi (24.5)
package main

import (
	"context"
	"fmt"
	"os"
)

type cityTemp struct {
	name string
	temp float64
}

func warmest(all []cityTemp) cityTemp {
	best := all[0]
	for _, c := range all[1:] {
		if c.temp > best.temp {
			best = c
		}
	}
	return best
}

func main() {
	ctx := context.Background()
	var all []cityTemp
	for _, name := range []string{"Paris", "Nairobi", "Oslo"} {
		w, err := getWeather(ctx, GetWeatherInput{City: name})
		if err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		all = append(all, cityTemp{name, w.Temperature})
	}
	b := warmest(all)
	fmt.Printf("warmest: %s (%.1f)\n", b.name, b.temp)
}
