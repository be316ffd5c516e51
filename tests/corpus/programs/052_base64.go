// expect: ok
// output: aGVsbG8gd29ybGQ=
// output: hello world
enc := base64.StdEncoding.EncodeToString([]byte("hello world"))
fmt.Println(enc)
dec, err := base64.StdEncoding.DecodeString(enc)
if err != nil {
	return err
}
fmt.Println(string(dec))
