// expect: ok
// output: Oslo 4
// output: New York 15
// output: Paris 18.5
type item struct {
	city string
	temp float64
}

type minHeap []item

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].temp < h[j].temp }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(item)) }
func (h *minHeap) Pop() any {
	old := *h
	n := len(old)
	x := old[n-1]
	*h = old[:n-1]
	return x
}

h := &minHeap{}
for _, c := range []string{"Paris", "Oslo", "New York"} {
	w, err := getWeather(ctx, GetWeatherInput{City: c})
	if err != nil {
		return err
	}
	heap.Push(h, item{c, w.Temperature})
}
for h.Len() > 0 {
	it := heap.Pop(h).(item)
	fmt.Println(it.city, it.temp)
}
