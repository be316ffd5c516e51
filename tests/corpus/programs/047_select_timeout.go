// expect: ok
// output: got: Tokyo sunny
ch := make(chan GetWeatherOutput, 1)
errc := make(chan error, 1)
go func() {
	w, err := getWeather(ctx, GetWeatherInput{City: "Tokyo"})
	if err != nil {
		errc <- err
		return
	}
	ch <- w
}()
select {
case w := <-ch:
	fmt.Println("got: Tokyo", w.Conditions)
case err := <-errc:
	return err
case <-time.After(20 * time.Second):
	return errors.New("timed out")
}
