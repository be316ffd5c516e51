// expect: ok
// output: bytes=6 runes=5 valid=true
s := "héllo"[:6]
fmt.Printf("bytes=%d runes=%d valid=%v\n", len(s), utf8.RuneCountInString(s), utf8.ValidString(s))
