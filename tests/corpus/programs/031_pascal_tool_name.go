// expect: compile
// error: undefined: GetCity \(did you mean getCity\?\)
// error: func getCity\(context\.Context\) \(GetCityOutput, error\)
c, err := GetCity(ctx)
if err != nil {
	return err
}
fmt.Println(c.City)
