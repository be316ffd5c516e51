// expect: ok
// output: 10.1.2.3 in 10.0.0.0/8: true
// output: 192.168.0.1 in 10.0.0.0/8: false
prefix := netip.MustParsePrefix("10.0.0.0/8")
for _, s := range []string{"10.1.2.3", "192.168.0.1"} {
	addr, err := netip.ParseAddr(s)
	if err != nil {
		return err
	}
	fmt.Printf("%s in %s: %v\n", addr, prefix, prefix.Contains(addr))
}
