// expect: ok
// output: 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
sum := sha256.Sum256([]byte("hello"))
fmt.Printf("%x\n", sum)
