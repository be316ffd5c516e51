// expect: ok
// output: 0x01020304 -> [1 2 3 4]
// output: back: 16909060
buf := make([]byte, 4)
binary.BigEndian.PutUint32(buf, 0x01020304)
fmt.Printf("0x%08x -> %v\n", 0x01020304, buf)
fmt.Println("back:", binary.BigEndian.Uint32(buf))
