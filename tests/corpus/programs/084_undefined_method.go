// expect: compile
// error: ^model\.go:1:5: undefined: fmt\.Printn
fmt.Printn("hello")
