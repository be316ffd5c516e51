//go:build !gocode_loopback

package rt

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// An httpTransport is the HTTP client side of a session to an MCP server over HTTP: it sends
// the configured headers (e.g. Authorization) with every request, remembers the last error
// status the server answered (the SDK's errors carry only its text: "Unauthorized"), and
// counts the progress notifications in event streams as they are read (see progress.go).
type httpTransport struct {
	headers    map[string]string
	signsIn    bool // the server is configured with OAuth: its token is the controller's sign-in
	base       http.RoundTripper
	lastStatus atomic.Int64
	version    atomic.Pointer[string] // the negotiated protocol version, when set (taskhttp.go)
}

// setVersion makes the client send version as the protocol version header on each request
// that has none (see taskhttp.go).
func (t *httpTransport) setVersion(version string) { t.version.Store(&version) }

const protocolVersionHeader = "Mcp-Protocol-Version"

func newHTTPClient(headers map[string]string, signsIn bool) (*http.Client, *httpTransport) {
	t := &httpTransport{headers: headers, signsIn: signsIn, base: http.DefaultTransport}
	return &http.Client{Transport: t}, t
}

func (t *httpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	version := t.version.Load()
	if version != nil && req.Header.Get(protocolVersionHeader) != "" {
		version = nil // the SDK named one
	}
	if len(t.headers) > 0 || version != nil {
		req = req.Clone(req.Context())
		if version != nil {
			req.Header.Set(protocolVersionHeader, *version)
		}
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	// A session's end (DELETE) and the optional standalone stream (GET, 405 when a server
	// has none) are not failures of what the program asked for.
	if req.Method == http.MethodPost {
		status := int64(0)
		if resp.StatusCode >= 400 {
			status = int64(resp.StatusCode)
		}
		t.lastStatus.Store(status)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &eventReader{body: resp.Body}
	}
	return resp, nil
}

// statusHint says what an HTTP error status the server answered means for the config, or ""
// when it answered none.
func (t *httpTransport) statusHint() string {
	if t == nil {
		return ""
	}
	code := int(t.lastStatus.Load())
	if code == 0 {
		return ""
	}
	if t.signsIn && (code == http.StatusUnauthorized || code == http.StatusForbidden) {
		return describeSignInStatus(code)
	}
	return describeStatus(code)
}

// describeSignInStatus is a 401 or 403 from a server configured with OAuth: the program sends
// the access token the controller's sign-in kept, and cannot sign in again itself. The
// controller's first sentence is the same (gocode/mcp/httpstatus.py).
func describeSignInStatus(code int) string {
	return fmt.Sprintf("HTTP %d %s", code, http.StatusText(code)) +
		": the OAuth sign-in gave no token the server takes (see the server's `auth`, docs/oauth.md);" +
		" the kept token may have expired or lack a scope: a `gocode call` to the server signs in again, or run pooled"
}

// describeStatus is an HTTP error status with what to check in gocode's config. The controller
// words it the same (gocode/mcp/httpstatus.py).
func describeStatus(code int) string {
	what := fmt.Sprintf("HTTP %d %s", code, http.StatusText(code))
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return what + ": check the server's headers (its token) in the config"
	case code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
		return what + ": check the server's url in the config (is it the MCP endpoint?)"
	}
	return what
}

// An eventReader passes an event stream on unchanged, noting each complete data line. A line
// longer than maxNoted (a large result, never a progress notification) is not kept.
type eventReader struct {
	body     io.ReadCloser
	partial  []byte // the start of a line not yet ended
	skipping bool   // inside a line longer than maxNoted
}

const maxNoted = 64 << 10

func (e *eventReader) Read(p []byte) (int, error) {
	n, err := e.body.Read(p)
	if n > 0 {
		e.scan(p[:n])
	}
	return n, err
}

func (e *eventReader) scan(chunk []byte) {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			if !e.skipping {
				e.partial = append(e.partial, chunk...)
				if len(e.partial) > maxNoted {
					e.partial, e.skipping = nil, true
				}
			}
			return
		}
		line := chunk[:i]
		chunk = chunk[i+1:]
		if e.skipping {
			e.skipping = false
			continue
		}
		if len(e.partial) > 0 {
			line = append(e.partial, line...)
			e.partial = nil
		}
		if rest, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("data:")); ok {
			noteRead(bytes.TrimSpace(rest))
		}
	}
}

func (e *eventReader) Close() error { return e.body.Close() }
