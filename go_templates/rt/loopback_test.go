//go:build gocode_loopback

package rt

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// controller stands in for the controller's loopback endpoint: plain JSON at /mcp, an event
// stream (chunked) at /mcp-stream, the token checked, each request counted.
type controller struct {
	srv      *httptest.Server
	requests atomic.Int64
	answer   func(w http.ResponseWriter, method string, params map[string]any) // a tools/call
}

func newController(t *testing.T, answer func(w http.ResponseWriter, method string, params map[string]any)) *controller {
	c := &controller{answer: answer}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("X-Gocode-Server") == "" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var msg struct {
			ID     int64          `json:"id"`
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("X-Request-Id", fmt.Sprint(msg.ID))
		c.answer(w, r.URL.Path, msg.Params)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// use makes the program's servers "s" (and "@gocode") point at the controller.
func (c *controller) use(t *testing.T) {
	t.Helper()
	spec := func(name string) ServerSpec {
		return ServerSpec{
			Transport: "http", URL: c.srv.URL + "/mcp", StreamURL: c.srv.URL + "/mcp-stream",
			Headers: map[string]string{"Authorization": "Bearer tok", "X-Gocode-Server": name}, ProtocolVersion: "2025-06-18",
		}
	}
	specsOnce.Do(func() {})
	specs, specsErr = map[string]ServerSpec{"s": spec("s"), controllerServer: spec(controllerServer)}, nil
	specsMu.Lock()
	endpoints = map[string]*endpoint{}
	specsMu.Unlock()
	closed.Store(false)
	t.Cleanup(Close)
}

func reply(w http.ResponseWriter, result string) {
	id := w.Header().Get("X-Request-Id")
	w.Header().Del("X-Request-Id")
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

func TestLoopbackCalls(t *testing.T) {
	tests := []struct {
		name   string
		result string // the tools/call result the controller answers
		call   func(ctx context.Context) (string, error)
		want   string
	}{
		{"json", `{"content":[{"type":"text","text":"{\"n\":2}"}]}`, func(ctx context.Context) (string, error) {
			out, err := CallJSON[struct{ N int }](ctx, "s", "t", nil)
			return fmt.Sprint(out.N), err
		}, "2"},
		{"structured", `{"content":[],"structuredContent":{"n":12345678901234567890}}`, func(ctx context.Context) (string, error) {
			v, err := CallTool(ctx, "s.t", nil)
			return fmt.Sprint(v), err
		}, "map[n:1.2345678901234567e+19]"},
		{"text parts", `{"content":[{"type":"text","text":"a"},{"type":"image","mimeType":"image/png","data":"AAEC"},{"type":"resource_link","name":"n","uri":"u://x"},{"type":"tool_use","id":"1","name":"x","input":{}}]}`,
			func(ctx context.Context) (string, error) { return CallText(ctx, "s", "t", nil) },
			"a\n[image image/png, 3 bytes]\n[resource link n u://x]\n[*mcp.ToolUseContent]"},
		{"media", `{"content":[{"type":"audio","mimeType":"audio/wav","data":"AAE="},{"type":"resource","resource":{"uri":"u","blob":"AQ=="}}]}`,
			func(ctx context.Context) (string, error) {
				c, err := CallContent(ctx, "s", "t", nil)
				return fmt.Sprint(len(c.Media), c.Media[0].Data, c.Media[1].Data), err
			}, "2 [0 1] [1]"},
		{"tool error", `{"content":[{"type":"text","text":"nope"}],"isError":true}`,
			func(ctx context.Context) (string, error) { return CallText(ctx, "s", "t", nil) },
			"tool t (server s) failed: nope"},
		{"unknown content", `{"content":[{"type":"video"}]}`,
			func(ctx context.Context) (string, error) { return CallText(ctx, "s", "t", nil) },
			`calling tool t (server s): calling "tools/call": unrecognized content type "video"`},
		{"unknown server", `{}`,
			func(ctx context.Context) (string, error) { return CallText(ctx, "x", "t", nil) },
			`server "x" is not configured (known: s)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newController(t, func(w http.ResponseWriter, _ string, _ map[string]any) { reply(w, tt.result) })
			c.use(t)
			got, err := tt.call(context.Background())
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoopbackErrors(t *testing.T) {
	tests := []struct {
		name   string
		answer func(w http.ResponseWriter)
		want   string
	}{
		{"rpc error", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown server 'q'"}}`)
		}, `calling tool t (server s): calling "tools/call": unknown server 'q'`},
		{"busy", func(w http.ResponseWriter) { w.WriteHeader(http.StatusTooManyRequests) },
			`calling tool t (server s): calling "tools/call": rejected by transport: sending "tools/call": Too Many Requests (HTTP 429 Too Many Requests)`},
		{"too large", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"too big"}}`)
		}, `calling tool t (server s): calling "tools/call": sending "tools/call": too big: rejected by transport: Request Entity Too Large (HTTP 413 Request Entity Too Large)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newController(t, func(w http.ResponseWriter, _ string, _ map[string]any) {
				w.Header().Del("X-Request-Id")
				tt.answer(w)
			})
			c.use(t)
			_, err := CallText(context.Background(), "s", "t", nil)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLoopbackProgressStream(t *testing.T) {
	c := newController(t, func(w http.ResponseWriter, path string, params map[string]any) {
		id := w.Header().Get("X-Request-Id")
		w.Header().Del("X-Request-Id")
		if path != "/mcp-stream" {
			t.Errorf("a call with progress went to %s", path)
		}
		token := params["_meta"].(map[string]any)["progressToken"]
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%q,\"progress\":%d,\"total\":3,\"message\":\"m%d\"}}\n\n", token, i, i)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"other\",\"progress\":9}}\n\n")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n", id)
	})
	c.use(t)
	var seen []string
	v, err := CallToolStream(context.Background(), "s.t", nil, func(p Progress) {
		time.Sleep(10 * time.Millisecond) // a slow callback still gets every notification before the call returns
		seen = append(seen, fmt.Sprintf("%g/%g %s", p.Progress, p.Total, p.Message))
	})
	if err != nil || v != "done" {
		t.Fatalf("got %v, %v", v, err)
	}
	if got := strings.Join(seen, ","); got != "1/3 m1,2/3 m2,3/3 m3" {
		t.Errorf("progress %q", got)
	}
}

func TestLoopbackReusesConnectionsAndSurvivesIdleClose(t *testing.T) {
	var conns atomic.Int64
	c := newController(t, func(w http.ResponseWriter, _ string, _ map[string]any) {
		reply(w, `{"content":[{"type":"text","text":"ok"}]}`)
	})
	c.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	c.use(t)
	for i := 0; i < 5; i++ {
		if _, err := CallText(context.Background(), "s", "t", nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("5 calls in a row opened %d connections", n)
	}
	c.srv.CloseClientConnections() // the controller closes its idle connections
	if _, err := CallText(context.Background(), "s", "t", nil); err != nil {
		t.Fatalf("a call after the idle connection closed: %v", err)
	}
	if n := c.requests.Load(); n != 6 {
		t.Errorf("the controller saw %d requests for 6 calls", n)
	}
}

func TestLoopbackParallelCallsAndCancel(t *testing.T) {
	release := make(chan struct{})
	c := newController(t, func(w http.ResponseWriter, _ string, params map[string]any) {
		if params["name"] == "slow" {
			<-release
		}
		reply(w, `{"content":[{"type":"text","text":"ok"}]}`)
	})
	c.use(t)
	defer close(release)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := CallText(context.Background(), "s", "t", nil)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := CallText(ctx, "s", "slow", nil)
	if err == nil || err.Error() != "calling tool slow (server s): context deadline exceeded" {
		t.Errorf("got %v", err)
	}
}

func TestLoopbackRefusesHostileAnswers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for { // the request head
					line, err := r.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				io.WriteString(conn, "HTTP/1.1 200 OK\r\n")
				for i := 0; i < 10000; i++ { // headers without end
					io.WriteString(conn, "X-Filler: "+strings.Repeat("x", 100)+"\r\n")
				}
			}()
		}
	}()
	useListener(t, ln)
	_, err = CallText(context.Background(), "s", "t", nil)
	if err == nil || !strings.Contains(err.Error(), "response head is too long") {
		t.Errorf("got %v", err)
	}
}

func TestLoopbackRefusesOtherTransportsAndHeaderInjection(t *testing.T) {
	for _, spec := range []ServerSpec{
		{Transport: "stdio", Command: "x"},
		{Transport: "http", URL: "https://example.com/mcp"},
		{Transport: "http", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"A": "b\r\nX-Evil: 1"}},
	} {
		if _, err := newEndpoint(spec); err == nil {
			t.Errorf("%+v: accepted", spec)
		}
	}
}

func TestLoopbackClosed(t *testing.T) {
	c := newController(t, func(w http.ResponseWriter, _ string, _ map[string]any) { reply(w, `{"content":[]}`) })
	c.use(t)
	Close()
	if _, err := CallText(context.Background(), "s", "t", nil); err == nil || err.Error() != "gocode runtime is closed" {
		t.Errorf("got %v", err)
	}
}

func TestLoopbackReadsARefusalSentBeforeTheBody(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r := bufio.NewReader(conn)
		for { // the head only: the body is refused unread, as the controller's guard does
			line, err := r.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		body := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the request body is 9 bytes"}}`
		fmt.Fprintf(conn, "HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	}()
	useListener(t, ln)
	_, err = CallText(context.Background(), "s", "t", map[string]any{"x": strings.Repeat("x", 8<<20)})
	if err == nil || !strings.Contains(err.Error(), "the request body is 9 bytes: rejected by transport: Request Entity Too Large") {
		t.Errorf("got %v", err)
	}
}

// useListener makes the program's server "s" point at ln.
func useListener(t *testing.T, ln net.Listener) {
	t.Helper()
	specsOnce.Do(func() {})
	specs, specsErr = map[string]ServerSpec{"s": {Transport: "http", URL: "http://" + ln.Addr().String() + "/mcp"}}, nil
	specsMu.Lock()
	endpoints = map[string]*endpoint{}
	specsMu.Unlock()
	closed.Store(false)
	t.Cleanup(Close)
}

// serveRaw answers each request read on ln with answer (false: close the connection
// unanswered); it counts the requests it read and the connections it accepted.
func serveRaw(t *testing.T, ln net.Listener, answer func(n int64, conn net.Conn) bool) (seen, conns *atomic.Int64) {
	seen, conns = new(atomic.Int64), new(atomic.Int64)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					req, err := http.ReadRequest(r)
					if err != nil {
						return
					}
					if _, err := io.Copy(io.Discard, req.Body); err != nil {
						return
					}
					if !answer(seen.Add(1), conn) {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return seen, conns
}

func okAnswer(conn net.Conn, id int64) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"ok"}]}}`, id)
	fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

func TestLoopbackSendsACallOnce(t *testing.T) {
	// The controller reads the second request (it may have run the call) and closes the
	// kept-alive connection without answering: the call fails, and is never sent again.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seen, _ := serveRaw(t, ln, func(n int64, conn net.Conn) bool {
		if n == 1 {
			okAnswer(conn, rpcSeq.Load())
			return true
		}
		return false
	})
	useListener(t, ln)
	if _, err := CallText(context.Background(), "s", "t", nil); err != nil {
		t.Fatal(err)
	}
	_, err = CallText(context.Background(), "s", "t", nil)
	want := `calling tool t (server s): calling "tools/call": sending "tools/call": rejected by transport: Post "http://` + ln.Addr().String() + `/mcp": EOF`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if n := seen.Load(); n != 2 {
		t.Errorf("the controller read %d requests for 2 calls", n)
	}
}

func TestLoopbackLeavesUnfitIdleConnections(t *testing.T) {
	// An idle connection whose reads were shut down, one idle past idleLimit, one the
	// controller sent bytes on unasked: each is dropped before the next call is written, so the
	// call goes out once, on a new connection.
	spoil := map[string]func(c *httpConn){
		"reads shut down": func(c *httpConn) {
			rc, err := c.f.SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			rc.Control(func(fd uintptr) { syscall.Shutdown(int(fd), syscall.SHUT_RD) })
		},
		"idle too long": func(c *httpConn) { c.idle = time.Now().Add(-idleLimit) },
		"bytes unasked": func(*httpConn) {},
	}
	for name, spoil := range spoil {
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			unasked := make(chan struct{})
			seen, conns := serveRaw(t, ln, func(n int64, conn net.Conn) bool {
				okAnswer(conn, rpcSeq.Load())
				if n == 1 && name == "bytes unasked" {
					io.WriteString(conn, "HTTP/1.1 200 OK\r\n")
					close(unasked)
				}
				return true
			})
			useListener(t, ln)
			if _, err := CallText(context.Background(), "s", "t", nil); err != nil {
				t.Fatal(err)
			}
			if name == "bytes unasked" {
				<-unasked
			}
			poolMu.Lock()
			idle := pool[netip.MustParseAddrPort(ln.Addr().String())]
			if len(idle) != 1 {
				poolMu.Unlock()
				t.Fatalf("%d idle connections after one call", len(idle))
			}
			spoil(idle[0])
			poolMu.Unlock()
			if _, err := CallText(context.Background(), "s", "t", nil); err != nil {
				t.Fatalf("the call after: %v", err)
			}
			if n := seen.Load(); n != 2 {
				t.Errorf("the controller read %d requests for 2 calls", n)
			}
			if n := conns.Load(); n != 2 {
				t.Errorf("2 calls, the first connection unfit after the first: %d connections", n)
			}
		})
	}
}
