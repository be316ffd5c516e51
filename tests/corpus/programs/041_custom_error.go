// expect: ok
// output: not found: Atlantis
// output: is ErrNotFound: true
var ErrNotFound = errors.New("not found")

type LookupError struct {
	City string
}

func (e *LookupError) Error() string { return "not found: " + e.City }

func (e *LookupError) Unwrap() error { return ErrNotFound }

func lookup(city string) error {
	known := []string{"Paris", "Oslo"}
	if !slices.Contains(known, city) {
		return &LookupError{City: city}
	}
	return nil
}

err := lookup("Atlantis")
var le *LookupError
if errors.As(err, &le) {
	fmt.Println(le)
}
fmt.Println("is ErrNotFound:", errors.Is(err, ErrNotFound))
