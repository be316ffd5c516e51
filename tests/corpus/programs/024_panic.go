// expect: runtime
// output: before
// error: panic: something went wrong
fmt.Println("before")
var items []string
if len(items) == 0 {
	panic("something went wrong")
}
fmt.Println("after")
