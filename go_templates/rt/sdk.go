//go:build !gocode_loopback

package rt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
	mu     sync.Mutex
	conns  = map[string]*conn{}
	closed bool
)

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
	spec, err := specFor(server)
	if err != nil {
		return nil, err
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
		client, c.http = newHTTPClient(spec.Headers, spec.SignsIn)
		transport = &mcp.StreamableClientTransport{Endpoint: spec.URL, HTTPClient: client}
	case "sse":
		var client *http.Client
		client, c.http = newHTTPClient(spec.Headers, spec.SignsIn)
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
	// Elicitation only when someone answers it (the controller's channel, or GOCODE_ELICIT).
	elicit, elicitCaps := elicitation(server)
	client := mcp.NewClient(&mcp.Implementation{Name: "gocode", Version: version}, &mcp.ClientOptions{
		Capabilities:                &mcp.ClientCapabilities{Elicitation: elicitCaps},
		ProgressNotificationHandler: onProgress,
		ElicitationHandler:          elicit,
	})
	var negotiated func(string)
	if c.http != nil && spec.Transport == "http" {
		negotiated = c.http.setVersion
	}
	transport = withTasks(transport, spec.TaskTools, negotiated)
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

// callWith is [call], with progress notifications for the call sent to progress (if not nil).
func callWith(ctx context.Context, server, tool string, args any, progress func(Progress)) (*toolResult, error) {
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
	out := fromSDK(res)
	if out.IsError {
		return nil, &ToolError{Server: server, Tool: tool, Message: textOf(out)}
	}
	rememberURIs(server, out.Content)
	return out, nil
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

// fromSDK is a result of the SDK in the shape both transports share: each block in its wire
// form, as the loopback hands it over, so that both read it the same way (annotations kept).
func fromSDK(res *mcp.CallToolResult) *toolResult {
	out := &toolResult{StructuredContent: res.StructuredContent, IsError: res.IsError}
	for _, c := range res.Content {
		var p part
		raw, err := json.Marshal(c)
		if err == nil {
			err = json.Unmarshal(raw, &p)
		}
		if err != nil {
			p = part{Type: fmt.Sprintf("%T", c)}
		}
		out.Content = append(out.Content, p)
	}
	return out
}

// Text renders a result's content as text: text parts as they are, joined by newlines;
// other parts as a short bracketed note; the structured content as JSON when there is no
// content at all. It never fails, whatever the result holds.
func Text(res *mcp.CallToolResult) string { return textOf(fromSDK(res)) }
