// expect: ok
// output: crc32: 0d4a1185
fmt.Printf("crc32: %08x\n", crc32.ChecksumIEEE([]byte("hello world")))
