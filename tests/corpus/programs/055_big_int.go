// expect: ok
// output: 25! = 15511210043330985984000000
f := big.NewInt(1)
for i := int64(2); i <= 25; i++ {
	f.Mul(f, big.NewInt(i))
}
fmt.Println("25! =", f.String())
