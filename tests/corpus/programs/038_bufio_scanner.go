// expect: ok
// output: 3 lines, 6 words
input := "alpha beta\ngamma\ndelta epsilon zeta"
sc := bufio.NewScanner(strings.NewReader(input))
lines, words := 0, 0
for sc.Scan() {
	lines++
	words += len(strings.Fields(sc.Text()))
}
fmt.Printf("%d lines, %d words\n", lines, words)
