// expect: ok
// output: token length: 32
b := make([]byte, 16)
if _, err := rand.Read(b); err != nil {
	return err
}
token := hex.EncodeToString(b)
fmt.Println("token length:", len(token))
