// expect: ok
// output: Low Medium High
type Level int

const (
	Low Level = iota
	Medium
	High
)

func (l Level) String() string {
	return [...]string{"Low", "Medium", "High"}[l]
}

fmt.Println(Low, Medium, High)
