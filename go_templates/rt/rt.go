// Package rt is the runtime behind gocode's generated tool bindings.
//
// It reads how to reach each MCP server from the GOCODE_SERVERS environment variable (JSON,
// written by the gocode controller, so that commands, URLs and secrets never appear in
// generated source), connects to a server the first time one of its tools is called, shares
// that one session between all goroutines, and decodes tool results into Go values.
//
// A program calls [Main] with its Run function; Main cancels the context on SIGINT/SIGTERM,
// closes every session when Run returns and turns a returned error into exit status 1.
package rt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnvServers names the environment variable holding the server specs.
const EnvServers = "GOCODE_SERVERS"

// A ServerSpec says how to reach one MCP server.
type ServerSpec struct {
	Transport       string            `json:"transport"` // "stdio", "http" or "sse"
	Command         string            `json:"command,omitempty"`
	Args            []string          `json:"args,omitempty"`
	Env             map[string]string `json:"env,omitempty"`
	Dir             string            `json:"cwd,omitempty"`
	URL             string            `json:"url,omitempty"`
	Headers         map[string]string `json:"headers,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	ConnectTimeout  float64           `json:"connectTimeout,omitempty"` // seconds
	// StreamURL: where calls that want progress go, when it is not URL (the controller's
	// endpoint answers URL with plain JSON, which has no room for notifications).
	StreamURL string `json:"streamUrl,omitempty"`
	// ClientVersion: gocode's version, which the program introduces itself with (clientInfo).
	ClientVersion string `json:"clientVersion,omitempty"`
	// TaskTools: the server's tools that run only as MCP tasks (see tasks.go).
	TaskTools []string `json:"taskTools,omitempty"`
}

// A ToolError is a tool call that the server answered with isError: the tool's own message.
type ToolError struct {
	Server, Tool, Message string
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("tool %s (server %s) failed: %s", e.Tool, e.Server, e.Message)
}

type conn struct {
	once    sync.Once
	session *mcp.ClientSession
	err     error
	stderr  *tail
	cancel  context.CancelCauseFunc // ends the session's context after Close
	command *commandTransport       // a stdio server's transport (how its process ended)
	http    *httpTransport          // an HTTP server's client (the last error status it answered)
}

var (
	specsOnce sync.Once
	specs     map[string]ServerSpec
	specsErr  error

	mu     sync.Mutex
	conns  = map[string]*conn{}
	closed bool
)

func loadSpecs() {
	raw := os.Getenv(EnvServers)
	if raw == "" {
		specsErr = fmt.Errorf("%s is not set: run this program through gocode, or set it to a JSON object of server specs", EnvServers)
		return
	}
	if err := json.Unmarshal([]byte(raw), &specs); err != nil {
		specsErr = fmt.Errorf("decoding %s: %w", EnvServers, err)
	}
}

// Session returns the shared session for a server, connecting on first use. Safe for
// concurrent use; a failed connect is remembered and returned to every later caller.
func Session(ctx context.Context, server string) (*mcp.ClientSession, error) {
	return session(ctx, server, false)
}

// session is [Session], or with stream the session to the server's StreamURL (the same
// session when it has none).
func session(ctx context.Context, server string, stream bool) (*mcp.ClientSession, error) {
	key := connKey(server, stream)
	mu.Lock()
	if closed {
		mu.Unlock()
		return nil, errors.New("gocode runtime is closed")
	}
	c, ok := conns[key]
	if !ok {
		c = &conn{}
		conns[key] = c
	}
	mu.Unlock()
	c.once.Do(func() { c.session, c.err = connect(ctx, server, stream, c) })
	if c.session == nil && c.err == nil { // Close ran first: it spends the once without connecting
		return nil, errors.New("gocode runtime is closed")
	}
	return c.session, c.err
}

// connKey names a server's session: its own, or the one for streamed calls when the server
// has a StreamURL.
func connKey(server string, stream bool) string {
	specsOnce.Do(loadSpecs)
	if stream && specs[server].StreamURL != "" {
		return server + "\x00stream"
	}
	return server
}

func connect(ctx context.Context, server string, stream bool, c *conn) (*mcp.ClientSession, error) {
	specsOnce.Do(loadSpecs)
	if specsErr != nil {
		return nil, specsErr
	}
	spec, ok := specs[server]
	if !ok {
		return nil, fmt.Errorf("server %q is not configured (known: %s)", server, strings.Join(specNames(), ", "))
	}
	if stream && spec.StreamURL != "" {
		spec.URL = spec.StreamURL
	}
	timeout := 60 * time.Second
	if spec.ConnectTimeout > 0 {
		timeout = time.Duration(spec.ConnectTimeout * float64(time.Second))
	}
	// The session outlives the first caller's context (other goroutines share it), and the
	// SSE transport keeps its stream on the context given to Connect: so connect on a
	// context that lives as long as the session, and enforce the timeout with a timer.
	cctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	timer := time.AfterFunc(timeout, func() { cancel(context.DeadlineExceeded) })
	defer timer.Stop()

	var transport mcp.Transport
	switch spec.Transport {
	case "stdio", "":
		cmd := exec.Command(spec.Command, spec.Args...)
		cmd.Env = serverEnv(processEnv(), spec.Env)
		cmd.Dir = spec.Dir
		c.stderr = &tail{max: 8192}
		cmd.Stderr = c.stderr
		// Wait must not hang on a grandchild (npx → node) that keeps stderr open.
		cmd.WaitDelay = time.Second
		c.command = &commandTransport{server: server, cmd: cmd, terminate: time.Second}
		transport = c.command
	case "http":
		// MaxRetries left at the SDK's default: a server may end a call's stream and expect
		// the client to resume it (GET with Last-Event-ID after its retry delay).
		var client *http.Client
		client, c.http = newHTTPClient(spec.Headers)
		transport = &mcp.StreamableClientTransport{Endpoint: spec.URL, HTTPClient: client}
	case "sse":
		var client *http.Client
		client, c.http = newHTTPClient(spec.Headers)
		transport = &mcp.SSEClientTransport{Endpoint: spec.URL, HTTPClient: client}
	default:
		return nil, fmt.Errorf("server %q: unknown transport %q", server, spec.Transport)
	}
	// Empty capabilities: advertising roots changes some servers' tool lists and keeps
	// server-everything alive after stdin closes.
	version := spec.ClientVersion
	if version == "" {
		version = "0"
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "gocode", Version: version}, &mcp.ClientOptions{
		Capabilities:                &mcp.ClientCapabilities{},
		ProgressNotificationHandler: onProgress,
	})
	if spec.Transport != "http" { // wrapped, a streamable connection would lose its protocol version header
		transport = withTasks(transport, spec.TaskTools)
	}
	session, err := client.Connect(cctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: spec.ProtocolVersion})
	if err != nil {
		if errors.Is(context.Cause(cctx), context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s: %w", timeout, err)
		}
		cancel(nil)
		if how := c.command.ended(time.Second); how != "" {
			err = fmt.Errorf("%s: %w", how, err)
		}
		return nil, fmt.Errorf("connecting to MCP server %q%s: %w%s%s", server, describe(spec), err, c.statusHint(), c.stderrTail())
	}
	c.cancel = cancel
	return session, nil
}

func describe(spec ServerSpec) string {
	if spec.Transport == "stdio" || spec.Transport == "" {
		return fmt.Sprintf(" (command %q)", strings.Join(append([]string{spec.Command}, spec.Args...), " "))
	}
	return fmt.Sprintf(" (%s %s)", spec.Transport, spec.URL)
}

// statusHint is the HTTP error status the server answered, with what to check, or "".
func (c *conn) statusHint() string {
	if c == nil {
		return ""
	}
	if hint := c.http.statusHint(); hint != "" {
		return " (" + hint + ")"
	}
	return ""
}

func (c *conn) stderrTail() string {
	if c == nil || c.stderr == nil {
		return ""
	}
	if s := strings.TrimSpace(c.stderr.String()); s != "" {
		return "\nserver stderr (last lines):\n" + s
	}
	return ""
}

func specNames() []string {
	names := make([]string, 0, len(specs))
	for n := range specs {
		if n != controllerServer {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// call runs one tool call and turns protocol failures and isError results into errors.
func call(ctx context.Context, server, tool string, args any) (*mcp.CallToolResult, error) {
	return callWith(ctx, server, tool, args, nil)
}

// callWith is [call], with progress notifications for the call sent to progress (if not nil).
func callWith(ctx context.Context, server, tool string, args any, progress func(Progress)) (*mcp.CallToolResult, error) {
	defer trackCall(ctx, server)() // a step pass's watcher counts it (idle.go)
	s, err := session(ctx, server, progress != nil)
	if err != nil {
		return nil, err
	}
	if isNil(args) { // also a nil map (callTool(ctx, name, nil)): arguments are an object, never null
		args = map[string]any{}
	}
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	if progress != nil {
		token, done := watchProgress(progress)
		defer done(ctx)
		params.SetProgressToken(token)
	}
	res, err := s.CallTool(ctx, params)
	if err != nil {
		mu.Lock()
		c := conns[connKey(server, progress != nil)]
		mu.Unlock()
		if how := c.command.ended(100 * time.Millisecond); how != "" {
			err = fmt.Errorf("%s: %w", how, err)
		}
		return nil, fmt.Errorf("calling tool %s (server %s): %w%s%s", tool, server, err, c.statusHint(), c.stderrTail())
	}
	if res.IsError {
		return nil, &ToolError{Server: server, Tool: tool, Message: Text(res)}
	}
	rememberURIs(server, res.Content)
	return res, nil
}

// CallJSON calls a tool with an output schema and decodes its result into Out: the
// structured content if there is any, else the text content as JSON.
func CallJSON[Out any](ctx context.Context, server, tool string, args any) (Out, error) {
	var out Out
	res, err := call(ctx, server, tool, args)
	if err != nil {
		return out, err
	}
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err == nil {
			err = json.Unmarshal(raw, &out)
		}
		if err != nil {
			return out, fmt.Errorf("tool %s (server %s): decoding structured result into %T: %w; result: %s", tool, server, out, err, clip(string(raw)))
		}
		return out, nil
	}
	text := Text(res)
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return out, fmt.Errorf("tool %s (server %s) returned no structured content and its text is not JSON for %T (%v): %s", tool, server, out, err, clip(text))
	}
	return out, nil
}

// An InferredTypeError is a result that does not fit the type gocode inferred, from the
// tool's earlier results, for a tool that declares no output schema. Result is the result's
// JSON (or text) as it came.
type InferredTypeError struct {
	Server, Tool, Type, Result string
	Err                        error
}

func (e *InferredTypeError) Error() string {
	return fmt.Sprintf("tool %s (server %s) declares no output schema, and this result does not fit the type %s "+
		"gocode inferred from its earlier results (%v); the next program gets a type learned again with this result, "+
		"callTool(ctx, %q, args) returns it untyped; result: %s",
		e.Tool, e.Server, e.Type, e.Err, e.Server+"."+e.Tool, clip(e.Result))
}

func (e *InferredTypeError) Unwrap() error { return e.Err }

// CallInferred calls a tool that declares no output schema with a type gocode inferred from
// its earlier results, and decodes its result as [CallJSON] does. Keys the type lacks are
// ignored, keys it has that are missing stay zero; a value of another kind is an
// [*InferredTypeError] (with what did decode in the returned value).
func CallInferred[Out any](ctx context.Context, server, tool string, args any) (Out, error) {
	var out Out
	res, err := call(ctx, server, tool, args)
	if err != nil {
		return out, err
	}
	var raw []byte
	if res.StructuredContent != nil {
		raw, err = json.Marshal(res.StructuredContent)
	} else {
		raw = []byte(Text(res))
	}
	if err == nil {
		err = json.Unmarshal(raw, &out)
	}
	if err != nil {
		name := strings.ReplaceAll(fmt.Sprintf("%T", out), "tools.", "")
		return out, &InferredTypeError{Server: server, Tool: tool, Type: name, Result: string(raw), Err: err}
	}
	return out, nil
}

// CallText calls a tool without an output schema and returns its text (see [Text]).
func CallText(ctx context.Context, server, tool string, args any) (string, error) {
	res, err := call(ctx, server, tool, args)
	if err != nil {
		return "", err
	}
	return Text(res), nil
}

// A Media is one non-text part of a tool result: an image, audio, or a binary resource.
type Media struct {
	MIMEType string
	Data     []byte
}

// A Content is the result of a tool that may answer with non-text parts.
type Content struct {
	Text  string  // the text parts, joined by newlines
	Media []Media // images, audio, binary resources
	Parts []Part  // every part in order, links' URIs for [ReadResource]
}

// CallContent calls a tool whose result may hold images or audio and returns its text and
// its non-text parts, the bytes already decoded.
func CallContent(ctx context.Context, server, tool string, args any) (Content, error) {
	res, err := call(ctx, server, tool, args)
	if err != nil {
		return Content{}, err
	}
	out := contentOf(wireBlocks(res.Content))
	if out.Text == "" && len(out.Media) == 0 && res.StructuredContent != nil {
		out.Text = Text(res)
	}
	return out, nil
}

// wireBlocks is content in wire form: each block as the SDK marshals it.
func wireBlocks(content []mcp.Content) []json.RawMessage {
	blocks := make([]json.RawMessage, 0, len(content))
	for _, c := range content {
		raw, err := json.Marshal(c)
		if err != nil {
			raw, _ = json.Marshal(map[string]string{"type": "text", "text": fmt.Sprintf("[%T]", c)})
		}
		blocks = append(blocks, raw)
	}
	return blocks
}

// Text renders a result's content as text: text parts as they are, joined by newlines;
// other parts as a short bracketed note; the structured content as JSON when there is no
// content at all. It never fails, whatever the result holds.
func Text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link %s %s]", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s, %d bytes]", c.Resource.URI, len(c.Resource.Blob)))
			}
		default:
			parts = append(parts, fmt.Sprintf("[%T]", c))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if raw, err := json.Marshal(res.StructuredContent); err == nil {
			return string(raw)
		}
	}
	return strings.Join(parts, "\n")
}

func clip(s string) string {
	const max = 500
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// Close closes every open session (stdio servers get their stdin closed and are stopped).
// Later calls fail. Safe to call more than once.
func Close() {
	mu.Lock()
	closed = true
	open := make([]*conn, 0, len(conns))
	for _, c := range conns {
		open = append(open, c)
	}
	mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range open {
		c.once.Do(func() {}) // a connect in flight finishes first; none starts
		if c.session == nil {
			continue
		}
		wg.Add(1)
		go func(c *conn) {
			defer wg.Done()
			_ = c.session.Close() // "signal: terminated" from a slow server is not the program's failure
			c.cancel(nil)
		}(c)
	}
	wg.Wait()
}

// Main runs a program's Run function: the context is cancelled on SIGINT or SIGTERM, the
// value given to [Result] goes to the controller, sessions are closed afterwards, and a
// returned error is printed to stderr with exit status 1.
func Main(run func(context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	if err == nil {
		err = sendResult(ctx)
	}
	stop()
	Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
