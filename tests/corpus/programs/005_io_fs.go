// expect: ok
// output: a/b.txt true
// output: ../x false
for _, p := range []string{"a/b.txt", "../x"} {
	fmt.Println(p, fs.ValidPath(p))
}
