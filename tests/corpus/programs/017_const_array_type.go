// expect: ok
// output: X.O
// output: .X.
// output: O.X
// output: winner: X
const size = 3

type Grid [size][size]rune

func (g Grid) String() string {
	var sb strings.Builder
	for r := 0; r < size; r++ {
		for c := 0; c < size; c++ {
			sb.WriteRune(g[r][c])
		}
		if r < size-1 {
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

func (g Grid) diagWinner() rune {
	for c := 0; c < size; c++ {
		if g[c][c] != g[0][0] {
			return 0
		}
	}
	return g[0][0]
}

var g Grid
for r := range g {
	for c := range g[r] {
		g[r][c] = '.'
	}
}
g[0][0], g[1][1], g[2][2] = 'X', 'X', 'X'
g[0][2], g[2][0] = 'O', 'O'
fmt.Println(g)
fmt.Printf("winner: %c\n", g.diagWinner())
