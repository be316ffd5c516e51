// expect: compile
// error: ^model\.go:1:1: declared and not used: city
city, err := getCity(ctx)
if err != nil {
	return err
}
fmt.Println("done")
