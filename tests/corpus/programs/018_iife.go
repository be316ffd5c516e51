// expect: ok
// output: setup done
// output: total: 15
total := 0
func() {
	defer fmt.Println("setup done")
	for i := 1; i <= 5; i++ {
		total += i
	}
}()
fmt.Println("total:", total)
