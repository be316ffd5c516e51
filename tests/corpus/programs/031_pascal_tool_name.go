// expect: compile
// error: undefined: GetCity \(did you mean getCity\?\)
// error: var getCity func\(ctx context\.Context\)
c, err := GetCity(ctx)
if err != nil {
	return err
}
fmt.Println(c.City)
