//go:build !gocode_loopback

package rt

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A loopback stand-in: an MCP server over streamable HTTP on an httptest server, with tools
// that answer in each of the shapes the runtime decodes, and the controller's own tools.
type loopback struct {
	*httptest.Server
	mu      sync.Mutex
	results []json.RawMessage // what "result" was given
	headers []http.Header     // each request's headers
	// Closed by the test once its progress callback saw every notification: this server
	// sends them on the session's own stream, which the client may read after the answer.
	progressSeen chan struct{}
}

func newLoopback(t *testing.T) *loopback {
	t.Helper()
	lb := &loopback{progressSeen: make(chan struct{})}
	s := mcp.NewServer(&mcp.Implementation{Name: "loopback", Version: "1"}, nil)
	add := func(name string, h func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult) {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return h(ctx, req), nil
			})
	}
	text := func(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }
	add("echo", func(_ context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		var args map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &args)
		return &mcp.CallToolResult{Content: text(string(req.Params.Arguments)), StructuredContent: args}
	})
	add("jsontext", func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: text(`{"n": 3}`)}
	})
	add("words", func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: text("plain words")}
	})
	add("fail", func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: text("boom"), IsError: true}
	})
	add("media", func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "a chart"},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1, 2, 3}},
			&mcp.ResourceLink{Name: "doc", URI: "file:///doc"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://b", MIMEType: "application/octet-stream", Blob: []byte{9}}},
		}}
	})
	add("header", func(_ context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: text(req.Extra.Header.Get("X-Gocode-Test"))}
	})
	add("progress", func(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		token := req.Params.GetProgressToken()
		for i := 1; i <= 3; i++ {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: 3, Message: "step"})
		}
		select {
		case <-lb.progressSeen:
		case <-time.After(10 * time.Second):
		}
		return &mcp.CallToolResult{Content: text("done")}
	})
	add("progress_now", func(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		token := req.Params.GetProgressToken()
		for i := 1; i <= 3; i++ {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: 3})
		}
		return &mcp.CallToolResult{Content: text("done")}
	})
	add("search_tools", func(_ context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		var args struct{ Query string }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		if args.Query == "" {
			return &mcp.CallToolResult{Content: text("an empty query"), IsError: true}
		}
		return &mcp.CallToolResult{StructuredContent: map[string]any{"matches": []any{
			map[string]any{"name": "echo", "server": "svc", "function": "echo", "description": "for " + args.Query, "signature": "func echo()"},
		}}}
	})
	add("result", func(_ context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		var args struct{ Value json.RawMessage }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		lb.mu.Lock()
		defer lb.mu.Unlock()
		lb.results = append(lb.results, args.Value)
		return &mcp.CallToolResult{Content: text("ok")}
	})
	// The controller's answers to readResource, listResources and getPrompt (gocode/mcp/loopoffers.py).
	add("read_resource", func(_ context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		var args struct{ URI string }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		if args.URI != "mem://doc" {
			return &mcp.CallToolResult{Content: text("readResource: no server lists " + args.URI), IsError: true}
		}
		return &mcp.CallToolResult{StructuredContent: map[string]any{"server": "svc", "contents": []any{
			map[string]any{"uri": "mem://doc", "mimeType": "application/octet-stream", "blob": "AQID"},
		}}}
	})
	add("list_resources", func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{StructuredContent: map[string]any{"resources": []any{
			map[string]any{"server": "svc", "uri": "mem://doc", "name": "doc", "size": 3},
			map[string]any{"server": "svc", "uri": "mem://{id}", "name": "any", "template": true},
		}}}
	})
	add("get_prompt", func(_ context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		var args struct {
			Name      string
			Arguments map[string]string
		}
		_ = json.Unmarshal(req.Params.Arguments, &args)
		return &mcp.CallToolResult{StructuredContent: map[string]any{"description": args.Name, "messages": []any{
			map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi " + args.Arguments["who"]}},
			map[string]any{"role": "user", "content": map[string]any{"type": "image", "mimeType": "image/png", "data": "AQ==",
				"annotations": map[string]any{"priority": 0.5, "audience": []string{"user"}}}},
		}}}
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	lb.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lb.mu.Lock()
		lb.headers = append(lb.headers, r.Header.Clone())
		lb.mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(lb.Close)
	return lb
}

// useServers points the runtime at specs, as GOCODE_SERVERS does for a program, with fresh
// sessions; the sessions are closed when the test ends.
func useServers(t *testing.T, specs map[string]ServerSpec) {
	t.Helper()
	raw, err := json.Marshal(specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvServers, string(raw))
	resetRuntime()
	t.Cleanup(func() { Close(); resetRuntime() })
}

func resetRuntime() {
	mu.Lock()
	defer mu.Unlock()
	specsOnce = sync.Once{}
	specs, specsErr = nil, nil
	conns, closed = map[string]*conn{}, false
	resultMu.Lock()
	resultRaw, resultErr = nil, nil
	resultMu.Unlock()
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestCallTool(t *testing.T) {
	lb := newLoopback(t)
	useServers(t, map[string]ServerSpec{"svc": {Transport: "http", URL: lb.URL}})
	ctx := testContext(t)
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		want    any
		wantErr string
	}{
		{"structured content", "svc.echo", map[string]any{"city": "Oslo", "days": 2}, map[string]any{"city": "Oslo", "days": float64(2)}, ""},
		{"no arguments are an empty object", "svc.echo", nil, map[string]any{}, ""},
		{"JSON text", "svc.jsontext", nil, map[string]any{"n": float64(3)}, ""},
		{"plain text", "svc.words", nil, "plain words", ""},
		{"tool error", "svc.fail", nil, nil, "tool fail (server svc) failed: boom"},
		{"unknown tool", "svc.nothing", nil, nil, "calling tool nothing (server svc)"},
		{"unknown server", "other.echo", nil, nil, `"other.echo" is not "server.tool" for a known server (servers: svc)`},
		{"no tool name", "svc.", nil, nil, "is not \"server.tool\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CallTool(ctx, tt.tool, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("CallTool(%q) error = %v, want one containing %q", tt.tool, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("CallTool(%q): %v", tt.tool, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("CallTool(%q) = %#v, want %#v", tt.tool, got, tt.want)
			}
		})
	}
}

func TestToolErrorIsTyped(t *testing.T) {
	lb := newLoopback(t)
	useServers(t, map[string]ServerSpec{"svc": {Transport: "http", URL: lb.URL}})
	_, err := CallText(testContext(t), "svc", "fail", nil)
	var te *ToolError
	if !errors.As(err, &te) || te.Server != "svc" || te.Tool != "fail" || te.Message != "boom" {
		t.Fatalf("error = %#v, want a *ToolError from svc.fail saying boom", err)
	}
}

func TestSplitToolName(t *testing.T) {
	useServers(t, map[string]ServerSpec{"a": {}, "a.b": {}, controllerServer: {}})
	tests := []struct {
		name, server, tool string
		ok                 bool
	}{
		{"a.b.c", "a.b", "c", true}, // the longest server name wins
		{"a.x.y", "a", "x.y", true},
		{"a.", "", "", false},
		{"@gocode.search_tools", "", "", false}, // the controller is not callable by name
		{"zzz", "", "", false},
	}
	for _, tt := range tests {
		server, tool, err := splitToolName(tt.name)
		if (err == nil) != tt.ok || server != tt.server || tool != tt.tool {
			t.Errorf("splitToolName(%q) = %q, %q, %v; want %q, %q, ok=%v", tt.name, server, tool, err, tt.server, tt.tool, tt.ok)
		}
	}
}

func TestTypedCalls(t *testing.T) {
	lb := newLoopback(t)
	useServers(t, map[string]ServerSpec{"svc": {Transport: "http", URL: lb.URL}})
	ctx := testContext(t)

	type city struct {
		City string `json:"city"`
		Days int    `json:"days"`
	}
	got, err := CallJSON[city](ctx, "svc", "echo", city{City: "Oslo", Days: 2})
	if err != nil || got != (city{"Oslo", 2}) {
		t.Fatalf("CallJSON = %+v, %v", got, err)
	}
	n, err := CallJSON[struct{ N int }](ctx, "svc", "jsontext", nil)
	if err != nil || n.N != 3 {
		t.Fatalf("CallJSON from JSON text = %+v, %v", n, err)
	}
	if _, err := CallJSON[city](ctx, "svc", "words", nil); err == nil || !strings.Contains(err.Error(), "its text is not JSON") {
		t.Fatalf("CallJSON on plain text: error = %v", err)
	}
	if _, err := CallJSON[city](ctx, "svc", "echo", map[string]any{"days": "two"}); err == nil || !strings.Contains(err.Error(), "decoding structured result into rt.city") {
		t.Fatalf("CallJSON on a mismatched result: error = %v", err)
	}

	partial, err := CallInferred[city](ctx, "svc", "echo", map[string]any{"city": "Oslo", "days": "two", "extra": true})
	var ite *InferredTypeError
	if !errors.As(err, &ite) || ite.Type != "rt.city" || partial.City != "Oslo" || !strings.Contains(ite.Result, `"days":"two"`) {
		t.Fatalf("CallInferred on a mismatched result = %+v, %#v", partial, err)
	}
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		t.Fatalf("an InferredTypeError unwraps to the decoding error; got %v", ite.Err)
	}
	if _, err := CallInferred[city](ctx, "svc", "echo", map[string]any{"city": "Oslo", "unknown": 1}); err != nil {
		t.Fatalf("CallInferred ignores keys the type lacks: %v", err)
	}

	content, err := CallContent(ctx, "svc", "media", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantMedia := []Media{{"image/png", []byte{1, 2, 3}}, {"application/octet-stream", []byte{9}}}
	if content.Text != "a chart\n[resource link doc file:///doc]" || !reflect.DeepEqual(content.Media, wantMedia) {
		t.Fatalf("CallContent = %+v", content)
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want string
	}{
		{"texts joined", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}}, "a\nb"},
		{"image noted", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 4)}}}, "[image image/png, 4 bytes]"},
		{"audio noted", &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 2)}}}, "[audio audio/wav, 2 bytes]"},
		{"embedded text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "x", Text: "inside"}}}}, "inside"},
		{"embedded blob", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://x", Blob: []byte{1}}}}}, "[resource mem://x, 1 bytes]"},
		{"structured only", &mcp.CallToolResult{StructuredContent: map[string]any{"k": 1}}, `{"k":1}`},
		{"nothing", &mcp.CallToolResult{}, ""},
	}
	for _, tt := range tests {
		if got := Text(tt.res); got != tt.want {
			t.Errorf("%s: Text = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRequestCarriesHeaders(t *testing.T) {
	lb := newLoopback(t)
	useServers(t, map[string]ServerSpec{"svc": {Transport: "http", URL: lb.URL, Headers: map[string]string{"X-Gocode-Test": "token-1"}}})
	got, err := CallText(testContext(t), "svc", "header", nil)
	if err != nil || got != "token-1" {
		t.Fatalf("the tool saw header %q (%v), want token-1", got, err)
	}
	lb.mu.Lock()
	defer lb.mu.Unlock()
	for _, h := range lb.headers {
		if h.Get("X-Gocode-Test") != "token-1" {
			t.Fatalf("a request went out without the configured header: %v", h)
		}
	}
}

func TestConnectFailures(t *testing.T) {
	ctx := testContext(t)
	tests := []struct {
		name    string
		env     string // GOCODE_SERVERS as given
		server  string
		wantErr string
	}{
		{"unset", "", "svc", "GOCODE_SERVERS is not set"},
		{"not JSON", "{", "svc", "decoding GOCODE_SERVERS"},
		{"not configured", `{"svc":{"transport":"http","url":"http://127.0.0.1:1"}}`, "other", `server "other" is not configured (known: svc)`},
		{"unknown transport", `{"svc":{"transport":"carrier-pigeon"}}`, "svc", `unknown transport "carrier-pigeon"`},
		{"a command that exits", `{"svc":{"command":"/bin/sh","args":["-c","echo gone >&2; exit 3"]}}`, "svc", "connecting to MCP server \"svc\" (command \"/bin/sh -c echo gone >&2; exit 3\")"},
		{"nothing listening", `{"svc":{"transport":"http","url":"http://127.0.0.1:1/mcp","connectTimeout":5}}`, "svc", `connecting to MCP server "svc" (http http://127.0.0.1:1/mcp)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvServers, tt.env)
			resetRuntime()
			t.Cleanup(func() { Close(); resetRuntime() })
			_, err := Session(ctx, tt.server)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Session(%q) error = %v, want one containing %q", tt.server, err, tt.wantErr)
			}
			if _, again := Session(ctx, tt.server); again == nil || again.Error() != err.Error() {
				t.Fatalf("a failed connect is remembered: got %v then %v", err, again)
			}
		})
	}
}

func TestClosedRuntime(t *testing.T) {
	lb := newLoopback(t)
	useServers(t, map[string]ServerSpec{"svc": {Transport: "http", URL: lb.URL}})
	ctx := testContext(t)
	if _, err := CallText(ctx, "svc", "words", nil); err != nil {
		t.Fatal(err)
	}
	Close()
	Close() // twice is fine
	if _, err := CallText(ctx, "svc", "words", nil); err == nil || !strings.Contains(err.Error(), "gocode runtime is closed") {
		t.Fatalf("a call after Close: error = %v", err)
	}
}

func TestResultGoesToController(t *testing.T) {
	lb := newLoopback(t)
	useServers(t, map[string]ServerSpec{controllerServer: {Transport: "http", URL: lb.URL}})
	ctx := testContext(t)
	if err := sendResult(ctx); err != nil || len(lb.results) != 0 {
		t.Fatalf("no Result: nothing is sent (err %v, sent %d)", err, len(lb.results))
	}
	Result(map[string]int{"first": 1})
	Result(map[string]int{"last": 2}) // the last call wins
	if err := sendResult(ctx); err != nil {
		t.Fatal(err)
	}
	if len(lb.results) != 1 || string(lb.results[0]) != `{"last":2}` {
		t.Fatalf("the controller got %q", lb.results)
	}
	Result(make(chan int))
	if err := sendResult(ctx); err == nil || !strings.Contains(err.Error(), "result(chan int): the value cannot be encoded as JSON") {
		t.Fatalf("an unencodable result: error = %v", err)
	}
}

func TestResultFileWithoutController(t *testing.T) {
	useServers(t, map[string]ServerSpec{})
	path := filepath.Join(t.TempDir(), "result.json")
	t.Setenv(EnvResultFile, path)
	Result([]string{"a", "b"})
	if err := sendResult(testContext(t)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != `["a","b"]` {
		t.Fatalf("result file = %q, %v", got, err)
	}
}

func TestSearchTools(t *testing.T) {
	lb := newLoopback(t)
	ctx := testContext(t)
	useServers(t, map[string]ServerSpec{"svc": {Transport: "http", URL: lb.URL}})
	if _, err := SearchTools(ctx, "weather"); err == nil || !strings.Contains(err.Error(), "only a controller has") {
		t.Fatalf("without a controller: error = %v", err)
	}
	useServers(t, map[string]ServerSpec{"svc": {Transport: "http", URL: lb.URL}, controllerServer: {Transport: "http", URL: lb.URL}})
	got, err := SearchTools(ctx, "weather")
	want := []ToolMatch{{Name: "echo", Server: "svc", Function: "echo", Description: "for weather", Signature: "func echo()"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("SearchTools = %+v, %v", got, err)
	}
	if _, err := SearchTools(ctx, ""); err == nil || err.Error() != "searchTools: an empty query" {
		t.Fatalf("a refused search: error = %v", err)
	}
}

func TestCallToolStreamReportsProgress(t *testing.T) {
	lb := newLoopback(t)
	useServers(t, map[string]ServerSpec{"svc": {Transport: "http", URL: lb.URL}})
	var seen []Progress
	got, err := CallToolStream(testContext(t), "svc.progress", nil, func(p Progress) {
		seen = append(seen, p) // one at a time: CallToolStream serialises the callback
		if len(seen) == 3 {
			close(lb.progressSeen)
		}
	})
	if err != nil || got != "done" {
		t.Fatalf("CallToolStream = %v, %v", got, err)
	}
	want := []Progress{{1, 3, "step"}, {2, 3, "step"}, {3, 3, "step"}}
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("progress seen = %+v, want %+v", seen, want)
	}
	n := 0
	progressWatches.Range(func(any, any) bool { n++; return true })
	if n != 0 {
		t.Fatalf("%d progress watchers left after the call", n)
	}
}

func TestCallToolStreamHandsOverEveryNotificationBeforeReturning(t *testing.T) {
	lb := newLoopback(t)
	useServers(t, map[string]ServerSpec{"svc": {Transport: "http", URL: lb.URL}})
	for range 3 {
		var seen []float64
		_, err := CallToolStream(testContext(t), "svc.progress_now", nil, func(p Progress) {
			time.Sleep(20 * time.Millisecond) // a slow callback: the answer arrives before it is done
			seen = append(seen, p.Progress)
		})
		if err != nil || !reflect.DeepEqual(seen, []float64{1, 2, 3}) {
			t.Fatalf("CallToolStream: progress seen %v, error %v; want 1 2 3", seen, err)
		}
	}
}

func TestNoteReadCountsOnlyWatchedProgressAndStaysLinear(t *testing.T) {
	token, done := watchProgress(func(Progress) {})
	defer done(context.Background())
	note := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + token + `","progress":1}}`
	other := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"someone-else","progress":1}}`
	for _, msg := range []string{note, "[" + note + "," + other + "]", other, `{"method":"tools/call"}`} {
		noteRead([]byte(msg))
	}
	// A server's deeply nested "batch" is not a batch: not walked level by level.
	deep := strings.Repeat("[", 9000) + note + strings.Repeat("]", 9000)
	start := time.Now()
	for range 50 {
		noteRead([]byte(deep))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("50 deeply nested lines took %s", d)
	}
	v, _ := progressWatches.Load(token)
	w := v.(*progressWatch)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.read != 2 {
		t.Fatalf("counted %d notifications for the watched token, want 2", w.read)
	}
}

func TestEventReaderNotesDataLinesAcrossChunks(t *testing.T) {
	token, done := watchProgress(func(Progress) {})
	defer done(context.Background())
	note := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + token + `","progress":1}}`
	stream := "id: 1\ndata: " + note + "\n\n" + "data: " + strings.Repeat("x", maxNoted+10) + "\n\ndata: " + note + "\r\n\n"
	e := &eventReader{body: io.NopCloser(strings.NewReader(stream))}
	buf := make([]byte, 7) // tiny reads: every line is split across chunks
	var got strings.Builder
	for {
		n, err := e.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if got.String() != stream {
		t.Fatalf("the stream was changed")
	}
	v, _ := progressWatches.Load(token)
	w := v.(*progressWatch)
	if w.read != 2 || len(e.partial) != 0 {
		t.Fatalf("counted %d, kept %d bytes; want 2 and 0", w.read, len(e.partial))
	}
}

func TestHTTPErrorsSayTheStatusAndWhatToCheck(t *testing.T) {
	for _, tt := range []struct {
		status int
		want   string
	}{
		{401, "HTTP 401 Unauthorized: check the server's headers (its token) in the config"},
		{403, "HTTP 403 Forbidden: check the server's headers (its token) in the config"},
		{404, "HTTP 404 Not Found: check the server's url in the config"},
		{500, "HTTP 500 Internal Server Error"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "no", tt.status)
		}))
		useServers(t, map[string]ServerSpec{"svc": {Transport: "http", URL: srv.URL, ConnectTimeout: 10}})
		_, err := CallText(testContext(t), "svc", "echo", nil)
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("status %d: error = %v, want it to say %q", tt.status, err, tt.want)
		}
	}
}

func TestCallWithoutArgumentsSendsAnObject(t *testing.T) {
	lb := newLoopback(t)
	useServers(t, map[string]ServerSpec{"svc": {Transport: "http", URL: lb.URL}})
	for _, args := range []any{nil, map[string]any(nil)} {
		got, err := CallText(testContext(t), "svc", "echo", args)
		if err != nil || got != "{}" {
			t.Fatalf("CallText(echo, %#v) = %q, %v; want {}", args, got, err)
		}
	}
}

func TestServerEnvPassesOnlyTheBaseAndTheConfig(t *testing.T) {
	environ := []string{
		EnvServers + `={"secret":{}}`, "PATH=/bin", "HOME=/home/u", "LC_ALL=C.UTF-8",
		"AWS_SECRET_ACCESS_KEY=s3cr3t", "GOCODE_TOKEN=t", "TERM=() { :; }", "USER=u",
	}
	got := map[string]string{}
	for _, kv := range serverEnv(environ, map[string]string{"EXTRA": "1", "USER": "svc"}) {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Fatalf("%s is set twice", k)
		}
		got[k] = v
	}
	want := map[string]string{"PATH": "/bin", "HOME": "/home/u", "LC_ALL": "C.UTF-8", "EXTRA": "1", "USER": "svc"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("serverEnv = %v, want %v", got, want)
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	tl := &tail{max: 5}
	for _, s := range []string{"abc", "defg", "hi"} {
		if n, err := tl.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := tl.String(); got != "efghi" {
		t.Fatalf("tail = %q, want efghi", got)
	}
	if got := clip(strings.Repeat("x", 600)); len(got) != 500+len("…") {
		t.Fatalf("clip kept %d bytes", len(got))
	}
}
