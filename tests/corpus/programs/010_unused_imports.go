// expect: ok
// output: PARIS
import (
	"fmt"
	"os"
	"strings"
	"time"
)

city, err := getCity(ctx)
if err != nil {
	return err
}
fmt.Println(strings.ToUpper(city.City))
