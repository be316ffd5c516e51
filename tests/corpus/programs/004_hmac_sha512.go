// expect: ok
// output-re: ^signature: [0-9a-f]{128}\nvalid: true\n$
key := []byte("secret")
mac := hmac.New(sha512.New, key)
mac.Write([]byte("payload"))
sig := mac.Sum(nil)
fmt.Println("signature:", hex.EncodeToString(sig))
check := hmac.New(sha512.New, key)
check.Write([]byte("payload"))
fmt.Println("valid:", hmac.Equal(sig, check.Sum(nil)))
