// expect: ok
// output: Oslo is cloudy
package main

import (
	"context"
	"fmt"
	"os"
)

func run(ctx context.Context) error {
	w, err := getWeather(ctx, GetWeatherInput{City: "Oslo"})
	if err != nil {
		return fmt.Errorf("get weather: %w", err)
	}
	fmt.Printf("Oslo is %s\n", w.Conditions)
	return nil
}

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
