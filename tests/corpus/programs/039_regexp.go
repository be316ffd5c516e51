// expect: ok
// output: [2026-01-15 2026-02-20]
re := regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)
fmt.Println(re.FindAllString("from 2026-01-15 to 2026-02-20", -1))
