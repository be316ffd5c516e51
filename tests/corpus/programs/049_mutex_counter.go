// expect: ok
// output: count: 1000
type SafeCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *SafeCounter) Inc(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[key]++
}

c := SafeCounter{n: make(map[string]int)}
var wg sync.WaitGroup
for i := 0; i < 1000; i++ {
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.Inc("k")
	}()
}
wg.Wait()
fmt.Println("count:", c.n["k"])
