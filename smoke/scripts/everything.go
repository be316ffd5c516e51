// server-everything: plain-text tools, structured content and enums.
// want: Echo: smoke
// want: The sum of 2 and 40 is 42.
// want: New York 33.0 humidity 82
e, err := echo(ctx, EchoInput{Message: "smoke"})
if err != nil {
	return err
}
fmt.Println(e)
s, err := getSum(ctx, GetSumInput{A: 2, B: 40})
if err != nil {
	return err
}
fmt.Println(s)
w, err := getStructuredContent(ctx, GetStructuredContentInput{Location: GetStructuredContentInputLocationNewYork})
if err != nil {
	return err
}
fmt.Printf("New York %.1f humidity %.0f\n", w.Temperature, w.Humidity)
