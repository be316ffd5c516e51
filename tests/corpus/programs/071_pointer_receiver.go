// expect: ok
// output: Stats{n=3 min=4.0 max=22.0 mean=14.8}
type Stats struct {
	N             int
	Min, Max, Sum float64
}

func (s *Stats) Add(v float64) {
	if s.N == 0 || v < s.Min {
		s.Min = v
	}
	if s.N == 0 || v > s.Max {
		s.Max = v
	}
	s.N++
	s.Sum += v
}

func (s Stats) String() string {
	return fmt.Sprintf("Stats{n=%d min=%.1f max=%.1f mean=%.1f}", s.N, s.Min, s.Max, s.Sum/float64(s.N))
}

var st Stats
for _, c := range []string{"Paris", "Oslo", "Tokyo"} {
	w, err := getWeather(ctx, GetWeatherInput{City: c})
	if err != nil {
		return err
	}
	st.Add(w.Temperature)
}
fmt.Println(st)
