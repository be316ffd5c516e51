// expect: ok
// output: 1.5s
// output: 2026-03-01
d := time.Duration(1500) * time.Millisecond
fmt.Println(d)
t := time.Date(2026, time.February, 28, 12, 0, 0, 0, time.UTC).Add(24 * time.Hour)
fmt.Println(t.Format("2006-01-02"))
