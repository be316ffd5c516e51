// expect: ok
// output: CITY   TEMP
// output: Paris  18.5
// output: Oslo   4.0
tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
fmt.Fprintln(tw, "CITY\tTEMP")
for _, c := range []string{"Paris", "Oslo"} {
	w, err := getWeather(ctx, GetWeatherInput{City: c})
	if err != nil {
		return err
	}
	fmt.Fprintf(tw, "%s\t%.1f\n", c, w.Temperature)
}
tw.Flush()
