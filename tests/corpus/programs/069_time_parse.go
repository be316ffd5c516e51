// expect: ok
// output: Sunday 15 Mar 2026, 36h0m0s later: 2026-03-17T00:00:00Z
t, err := time.Parse(time.RFC3339, "2026-03-15T12:00:00Z")
if err != nil {
	return err
}
later := t.Add(36 * time.Hour)
fmt.Printf("%s, %s later: %s\n", t.Format("Monday 02 Jan 2006"), later.Sub(t), later.Format(time.RFC3339))
