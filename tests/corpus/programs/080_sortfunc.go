// expect: ok
// output: Oslo 4
// output: New York 15
// output: Paris 18.5
type rec struct {
	City string
	T    float64
}

recs := []rec{}
for _, c := range []string{"Paris", "Oslo", "New York"} {
	w, err := getWeather(ctx, GetWeatherInput{City: c})
	if err != nil {
		return err
	}
	recs = append(recs, rec{c, w.Temperature})
}
slices.SortFunc(recs, func(a, b rec) int { return cmp.Compare(a.T, b.T) })
for _, r := range recs {
	fmt.Println(r.City, r.T)
}
