// expect: ok
// output: found 7 at (1, 2)
grid := [][]int{{1, 2, 3}, {4, 5, 7}, {7, 8, 9}}
found := false
outer:
for i, row := range grid {
	for j, v := range row {
		if v == 7 {
			fmt.Printf("found %d at (%d, %d)\n", v, i, j)
			found = true
			break outer
		}
	}
}
if !found {
	fmt.Println("not found")
}
