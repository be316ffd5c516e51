// expect: ok
// output: units: 3 [104 105 55357] ...
// output: decoded: hi😀
s := "hi😀"
units := utf16.Encode([]rune(s))
fmt.Printf("units: %d %v ...\n", len(units)-1, units[:3])
fmt.Println("decoded:", string(utf16.Decode(units)))
