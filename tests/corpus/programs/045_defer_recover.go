// expect: ok
// output: recovered: runtime error: integer divide by zero
// output: result: 0
func safeDiv(a, b int) (res int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("recovered: %v", r)
		}
	}()
	return a / b, nil
}

res, err := safeDiv(1, 0)
if err != nil {
	fmt.Println(err)
}
fmt.Println("result:", res)
