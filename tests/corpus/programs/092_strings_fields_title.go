// expect: ok
// output: NEW-YORK new_york 8
name := "New York"
fmt.Println(strings.ToUpper(strings.ReplaceAll(name, " ", "-")), strings.ToLower(strings.Join(strings.Fields(name), "_")), len(name))
