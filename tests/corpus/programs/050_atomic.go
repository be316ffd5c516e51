// expect: ok
// output: hits: 50
var hits atomic.Int64
var wg sync.WaitGroup
for range 50 {
	wg.Add(1)
	go func() {
		defer wg.Done()
		hits.Add(1)
	}()
}
wg.Wait()
fmt.Println("hits:", hits.Load())
