// expect: ok
// output: &lt;b&gt;Paris&lt;/b&gt; &amp; more
fmt.Println(html.EscapeString("<b>Paris</b> & more"))
