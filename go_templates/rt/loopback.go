//go:build gocode_loopback

package rt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The loopback transport: every server is reached through the controller's endpoint
// (gocode/mcp/loopback.py), which is stateless and answers a tools/call without a session, so
// a call is one HTTP/1.1 POST — plain JSON at the spec's url, an event stream at its streamUrl
// for a call that wants progress. Only a socket (tcpconn.go) and encoding/json: the SDK,
// net/http and even package net cost most of a program's link. Its answers and errors read as the SDK transport's do
// (tests/test_runner_diff.py runs the model-code corpus both ways).

// settleLimit bounds how long a call, on return, waits for its progress callback to have had
// the notifications read before its answer (a callback that blocks costs at most this much).
const settleLimit = 2 * time.Second

// maxHead bounds a response's status line and headers; the controller sends a few hundred bytes.
const maxHead = 64 << 10

// An endpoint is where one server's calls go: the controller's address, the path, and the
// request head every call repeats (the run's token, the server's name).
type endpoint struct {
	url  string
	addr netip.AddrPort // numeric: dialled without a resolver (tcpconn.go)
	head string         // "POST path HTTP/1.1\r\n" and the fixed headers, up to Content-Length
}

var (
	specsMu   sync.Mutex
	endpoints = map[string]*endpoint{}
	closed    atomic.Bool
	rpcSeq    atomic.Int64

	poolMu sync.Mutex
	pool   = map[netip.AddrPort][]*httpConn{} // idle keep-alive connections, by address
)

// endpointFor is where a server's calls go (its stream URL for a call with progress).
func endpointFor(server string, stream bool) (*endpoint, error) {
	if closed.Load() {
		return nil, errors.New("gocode runtime is closed")
	}
	spec, err := specFor(server)
	if err != nil {
		return nil, err
	}
	key := server
	if stream && spec.StreamURL != "" {
		key, spec.URL = server+"\x00stream", spec.StreamURL
	}
	specsMu.Lock()
	defer specsMu.Unlock()
	if ep, ok := endpoints[key]; ok {
		return ep, nil
	}
	ep, err := newEndpoint(spec)
	if err != nil {
		return nil, fmt.Errorf("connecting to MCP server %q (%s %s): %w", server, spec.Transport, spec.URL, err)
	}
	endpoints[key] = ep
	return ep, nil
}

func newEndpoint(spec ServerSpec) (*endpoint, error) {
	if spec.Transport != "http" {
		return nil, fmt.Errorf("this program was built to reach its servers through gocode's controller only (transport %q)", spec.Transport)
	}
	rest, ok := strings.CutPrefix(spec.URL, "http://")
	if !ok {
		return nil, errors.New("the controller's endpoint must be an http:// URL")
	}
	host, path, _ := strings.Cut(rest, "/")
	if host == "" || strings.ContainsAny(host, "@?#") {
		return nil, errors.New("the controller's endpoint has no host:port")
	}
	var b strings.Builder
	b.WriteString("POST /" + path + " HTTP/1.1\r\nHost: " + host + "\r\n")
	b.WriteString("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n")
	if spec.ProtocolVersion != "" {
		b.WriteString("Mcp-Protocol-Version: " + spec.ProtocolVersion + "\r\n")
	}
	b.WriteString("User-Agent: gocode\r\n")
	for k, v := range spec.Headers {
		if strings.ContainsAny(k, "\r\n:") || strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("header %q cannot be sent", k)
		}
		b.WriteString(k + ": " + v + "\r\n")
	}
	addr, err := netip.ParseAddrPort(host)
	if err != nil {
		return nil, fmt.Errorf("the controller's endpoint must be a numeric address and port: %w", err)
	}
	return &endpoint{url: spec.URL, addr: addr, head: b.String()}, nil
}

// callWith is [call], with progress notifications for the call sent to progress (if not nil).
func callWith(ctx context.Context, server, tool string, args any, progress func(Progress)) (*toolResult, error) {
	defer trackCall(ctx, server)() // a step pass's watcher counts it (idle.go)
	ep, err := endpointFor(server, progress != nil)
	if err != nil {
		return nil, err
	}
	if isNil(args) { // also a nil map (callTool(ctx, name, nil)): arguments are an object, never null
		args = map[string]any{}
	}
	id := rpcSeq.Add(1)
	params := map[string]any{"name": tool, "arguments": args}
	var watch *progressFeed
	if progress != nil {
		token := fmt.Sprintf("gocode-%d", id)
		params["_meta"] = map[string]any{"progressToken": token}
		watch = newProgressFeed(token, progress)
	}
	res, err := ep.call(ctx, id, params, watch)
	if watch != nil {
		watch.settle(ctx)
	}
	if err != nil {
		var status *statusErr
		if ctx.Err() != nil && !errors.As(err, &status) {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("calling tool %s (server %s): %w", tool, server, err)
	}
	if res.IsError {
		return nil, &ToolError{Server: server, Tool: tool, Message: textOf(res)}
	}
	return res, nil
}

// A statusErr is an HTTP error status the controller answered, worded as the SDK words it.
type statusErr struct{ msg string }

func (e *statusErr) Error() string { return e.msg }

// call posts one tools/call and reads its answer (the notifications before it go to watch).
func (ep *endpoint) call(ctx context.Context, id int64, params map[string]any, watch *progressFeed) (*toolResult, error) {
	const method = "tools/call"
	paramsRaw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("calling %q: marshaling call parameters: %w", method, err)
	}
	body := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"` + method + `","params":`)
	body = append(append(body, paramsRaw...), '}')
	req := append([]byte(ep.head+"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"), body...)
	raw, err := ep.roundTrip(ctx, req, id, watch)
	var status *statusErr
	if err != nil && !errors.As(err, &status) {
		// Worded as the SDK's streamable client words a failed request.
		return nil, fmt.Errorf("calling %q: sending %q: rejected by transport: Post %q: %w", method, method, ep.url, err)
	}
	if err != nil {
		return nil, fmt.Errorf("calling %q: %w", method, err)
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		return nil, fmt.Errorf("calling %q: %w", method, err)
	}
	if msg.Error != nil {
		return nil, fmt.Errorf("calling %q: %s", method, msg.Error.Message)
	}
	res, err := decodeResult(msg.Result)
	if err != nil {
		return nil, fmt.Errorf("calling %q: %w", method, err)
	}
	return res, nil
}

// decodeResult reads a CallToolResult as the SDK does: a content type it does not know is an error.
func decodeResult(raw json.RawMessage) (*toolResult, error) {
	var wire struct {
		Content           []part `json:"content"`
		StructuredContent any    `json:"structuredContent"`
		IsError           bool   `json:"isError"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, err
	}
	for i, p := range wire.Content {
		switch p.Type {
		case "text", "image", "audio", "resource_link", "resource":
		case "tool_use":
			wire.Content[i].Type = "*mcp.ToolUseContent"
		case "tool_result":
			wire.Content[i].Type = "*mcp.ToolResultContent"
		default:
			return nil, fmt.Errorf("unrecognized content type %q", p.Type)
		}
	}
	return &toolResult{Content: wire.Content, StructuredContent: wire.StructuredContent, IsError: wire.IsError}, nil
}

// roundTrip sends req and returns the JSON-RPC response with id. A request is sent at most
// once: one the controller may have read (any byte of it written) is never sent again, as
// net/http never resends a POST; only a kept-alive connection that failed before a byte of the
// request left is given up for a new one. Idle connections the controller closed are found
// before writing (see conn), so that case stays rare.
func (ep *endpoint) roundTrip(ctx context.Context, req []byte, id int64, watch *progressFeed) ([]byte, error) {
	for {
		c, reused, err := ep.conn(ctx)
		if err != nil {
			return nil, err
		}
		raw, keep, written, err := c.exchange(ctx, req, id, watch)
		if err != nil && reused && written == 0 && ctx.Err() == nil {
			c.Close()
			continue
		}
		if err == nil && keep {
			ep.put(c)
		} else {
			c.Close()
		}
		return raw, err
	}
}

// idleLimit is how long a connection is kept idle for the next call: less than the
// controller's keep-alive (5 s, DEFAULT_KEEP_ALIVE_S in gocode/mcp/httplimits.py), so the
// controller seldom closes one as a request is being written on it (that request could not be
// sent again: see roundTrip).
var idleLimit = 3 * time.Second

type httpConn struct {
	*tcpConn
	r    *bufio.Reader
	idle time.Time // when it was put back in the pool
}

// conn is a connection for one request, and whether it was used before: an idle one still
// fit to use, else a new one. Those idle too long, closed by the controller or with bytes
// nobody asked for are closed on the way.
func (ep *endpoint) conn(ctx context.Context) (*httpConn, bool, error) {
	key := ep.addr
	for {
		poolMu.Lock()
		idle := pool[key]
		if len(idle) == 0 {
			poolMu.Unlock()
			break
		}
		c := idle[len(idle)-1]
		pool[key] = idle[:len(idle)-1]
		poolMu.Unlock()
		if time.Since(c.idle) < idleLimit && c.r.Buffered() == 0 && c.idleOpen() {
			return c, true, nil
		}
		c.Close()
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	nc, err := dialTCP(ep.addr) // loopback: it connects or is refused at once
	if err != nil {
		return nil, false, err
	}
	return &httpConn{tcpConn: nc, r: bufio.NewReaderSize(nc, 32<<10)}, false, nil
}

func (ep *endpoint) put(c *httpConn) {
	if closed.Load() {
		c.Close()
		return
	}
	key := ep.addr
	c.idle = time.Now()
	poolMu.Lock()
	pool[key] = append(pool[key], c)
	poolMu.Unlock()
}

// exchange writes one request and reads its response: the JSON-RPC answer with id, whether
// the connection may be used again, and how many bytes of the request were written.
func (c *httpConn) exchange(ctx context.Context, req []byte, id int64, watch *progressFeed) (raw []byte, keep bool, written int, err error) {
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer func() {
		if !stop() {
			keep = false // the deadline was set (or is being set): this connection is done
		}
	}()
	written, werr := c.Write(req)
	if _, err := c.r.Peek(1); err != nil {
		// Failed writing or reading: the read's error is what happened (the controller refused
		// the request and closed the connection), as net/http reports it.
		return nil, false, written, err
	}
	// On a failed write the controller answered before it read the whole request (a
	// refusal): its answer is read, and the connection not used again.
	status, header, err := readHead(c.r)
	if err != nil {
		return nil, false, written, err
	}
	keep = werr == nil && !strings.EqualFold(header["connection"], "close")
	body, err := bodyReader(c.r, header)
	if err != nil {
		return nil, false, written, err
	}
	if status < 200 || status > 299 {
		return nil, false, written, statusError(status, body)
	}
	if strings.HasPrefix(header["content-type"], "text/event-stream") {
		raw, err = readEvents(body, id, watch)
		if err == nil {
			_, err = io.Copy(io.Discard, body) // the rest of the stream, so the connection can be reused
		}
		return raw, keep && err == nil, written, err
	}
	raw, err = io.ReadAll(body)
	return raw, keep && err == nil, written, err
}

// statusError is an HTTP error status as the SDK's streamable client words it, with the hint
// the SDK transport adds.
func statusError(status int, body io.Reader) error {
	summary := `sending "tools/call"`
	text, hint := statusText(status), describeStatus(status)
	switch status {
	case 429, 500, 502, 503, 504:
		return &statusErr{fmt.Sprintf("rejected by transport: %s: %s (%s)", summary, text, hint)}
	}
	raw, _ := io.ReadAll(io.LimitReader(body, 64<<10))
	var msg struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &msg) == nil && msg.Error != nil {
		return &statusErr{fmt.Sprintf("%s: %s: rejected by transport: %s (%s)", summary, msg.Error.Message, text, hint)}
	}
	return &statusErr{fmt.Sprintf("%s: %s (%s)", summary, text, hint)}
}

// describeStatus is an HTTP error status with what to check (as the SDK transport's hint).
func describeStatus(code int) string {
	what := fmt.Sprintf("HTTP %d %s", code, statusText(code))
	switch code {
	case 401, 403:
		return what + ": check the server's headers (its token) in the config"
	case 404, 405:
		return what + ": check the server's url in the config (is it the MCP endpoint?)"
	}
	return what
}

// statusText names the statuses the controller's endpoint answers with.
func statusText(code int) string {
	switch code {
	case 400:
		return "Bad Request"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	case 406:
		return "Not Acceptable"
	case 413:
		return "Request Entity Too Large"
	case 415:
		return "Unsupported Media Type"
	case 421:
		return "Misdirected Request"
	case 429:
		return "Too Many Requests"
	case 500:
		return "Internal Server Error"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	case 504:
		return "Gateway Timeout"
	}
	return ""
}

// readHead reads a response's status line and headers (names lower-cased).
func readHead(r *bufio.Reader) (int, map[string]string, error) {
	header := map[string]string{}
	read := 0
	status := 0
	for first := true; ; first = false {
		line, err := r.ReadSlice('\n')
		read += len(line)
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) || read > maxHead {
				return 0, nil, errors.New("the controller's response head is too long")
			}
			return 0, nil, err
		}
		if read > maxHead {
			return 0, nil, errors.New("the controller's response head is too long")
		}
		text := strings.TrimRight(string(line), "\r\n")
		if first {
			proto, rest, _ := strings.Cut(text, " ")
			code, _, _ := strings.Cut(rest, " ")
			n, err := strconv.Atoi(code)
			if !strings.HasPrefix(proto, "HTTP/1.") || err != nil {
				return 0, nil, fmt.Errorf("malformed HTTP response %q", clip(text))
			}
			status = n
			continue
		}
		if text == "" {
			return status, header, nil
		}
		k, v, ok := strings.Cut(text, ":")
		if !ok {
			return 0, nil, fmt.Errorf("malformed HTTP header %q", clip(text))
		}
		header[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
}

// bodyReader is the response's body: chunked, of a Content-Length, or up to the connection's end.
func bodyReader(r *bufio.Reader, header map[string]string) (io.Reader, error) {
	if strings.EqualFold(header["transfer-encoding"], "chunked") {
		return &chunked{r: r}, nil
	}
	if v, ok := header["content-length"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad Content-Length %q", clip(v))
		}
		return io.LimitReader(r, n), nil
	}
	header["connection"] = "close"
	return r, nil
}

// chunked decodes HTTP/1.1 chunked transfer coding.
type chunked struct {
	r    *bufio.Reader
	left int64 // bytes left in the current chunk
	done bool
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.left == 0 {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		size, _, _ := strings.Cut(strings.TrimSpace(string(line)), ";")
		n, err := strconv.ParseInt(size, 16, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("malformed chunk size %q", clip(size))
		}
		if n == 0 {
			for { // trailers, up to the blank line
				line, err := c.r.ReadSlice('\n')
				if err != nil {
					return 0, err
				}
				if len(bytes.TrimSpace(line)) == 0 {
					break
				}
			}
			c.done = true
			return 0, io.EOF
		}
		c.left = n
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left == 0 && err == nil {
		if _, err = c.r.Discard(2); err != nil { // the chunk's CRLF
			return n, err
		}
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// readEvents reads an event stream up to the JSON-RPC response with id, handing the progress
// notifications before it to watch.
func readEvents(body io.Reader, id int64, watch *progressFeed) ([]byte, error) {
	r := bufio.NewReaderSize(body, 32<<10)
	var data []byte
	want := strconv.FormatInt(id, 10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil && len(line) == 0 {
			if err == io.EOF {
				return nil, errors.New("the stream ended before the answer")
			}
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			rest = bytes.TrimPrefix(rest, []byte(" "))
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, rest...)
			continue
		}
		if len(line) > 0 || data == nil {
			continue
		}
		msg := data
		data = nil
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProgressToken any     `json:"progressToken"`
				Progress      float64 `json:"progress"`
				Total         float64 `json:"total"`
				Message       string  `json:"message"`
			} `json:"params"`
		}
		if json.Unmarshal(msg, &head) != nil {
			continue
		}
		if head.Method == "notifications/progress" {
			if watch != nil && head.Params.ProgressToken == watch.token {
				watch.send(Progress{Progress: head.Params.Progress, Total: head.Params.Total, Message: head.Params.Message})
			}
			continue
		}
		if head.Method == "" && string(bytes.TrimSpace(head.ID)) == want {
			return msg, nil
		}
	}
}

// A progressFeed hands one call's progress notifications, in order, to its callback on a
// goroutine of its own (as the SDK's handler goroutine does): reading the stream never waits
// for the callback.
type progressFeed struct {
	token any
	mu    sync.Mutex
	queue []Progress
	ended bool
	wake  chan struct{}
	done  chan struct{}
}

func newProgressFeed(token string, fn func(Progress)) *progressFeed {
	f := &progressFeed{token: token, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		for {
			f.mu.Lock()
			if len(f.queue) > 0 {
				p := f.queue[0]
				f.queue = f.queue[1:]
				f.mu.Unlock()
				fn(p)
				continue
			}
			ended := f.ended
			f.mu.Unlock()
			if ended {
				return
			}
			<-f.wake
		}
	}()
	return f
}

func (f *progressFeed) send(p Progress) {
	f.mu.Lock()
	f.queue = append(f.queue, p)
	f.mu.Unlock()
	f.signal()
}

func (f *progressFeed) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// settle waits (within ctx and settleLimit) until the callback has had every notification.
func (f *progressFeed) settle(ctx context.Context) {
	f.mu.Lock()
	f.ended = true
	f.mu.Unlock()
	f.signal()
	timer := time.NewTimer(settleLimit)
	defer timer.Stop()
	select {
	case <-f.done:
	case <-ctx.Done():
	case <-timer.C:
	}
}

// Close ends the program's use of the controller: later calls fail. Safe to call more than once.
func Close() {
	closed.Store(true)
	poolMu.Lock()
	defer poolMu.Unlock()
	for addr, idle := range pool {
		for _, c := range idle {
			c.Close()
		}
		delete(pool, addr)
	}
}
