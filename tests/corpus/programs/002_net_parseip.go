// expect: ok
// output: 192.168.1.10 private=true
// output: 8.8.8.8 private=false
for _, s := range []string{"192.168.1.10", "8.8.8.8"} {
	ip := net.ParseIP(s)
	fmt.Printf("%s private=%v\n", ip, ip.IsPrivate())
}
