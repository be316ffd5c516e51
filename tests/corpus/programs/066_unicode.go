// expect: ok
// output: upper=2 digits=3 spaces=2
s := "Go 123 Rocks"
var upper, digits, spaces int
for _, r := range s {
	switch {
	case unicode.IsUpper(r):
		upper++
	case unicode.IsDigit(r):
		digits++
	case unicode.IsSpace(r):
		spaces++
	}
}
fmt.Printf("upper=%d digits=%d spaces=%d\n", upper, digits, spaces)
