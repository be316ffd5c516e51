// expect: compile
// error: ^model\.go:1:8: package "github\.com/pkg/errors" is not available: only the standard library and golang\.org/x/sync/errgroup can be imported
import "github.com/pkg/errors"

w, err := getWeather(ctx, GetWeatherInput{City: "Paris"})
if err != nil {
	return errors.Wrap(err, "weather")
}
fmt.Println(w.Temperature)
