// expect: ok
// output: name=Paris temp=18.5
var name string
var temp float64
n, err := fmt.Sscanf("Paris 18.5", "%s %f", &name, &temp)
if err != nil || n != 2 {
	return fmt.Errorf("parse: %v", err)
}
fmt.Printf("name=%s temp=%.1f\n", name, temp)
