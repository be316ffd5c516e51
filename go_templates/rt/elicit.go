//go:build !gocode_loopback

package rt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnvElicitSocket names the channel a controller (gocode exec --direct) opened for this run:
// each server's elicitation request is sent there and answered by the person at gocode's
// terminal, or by the choice the command was given. The program never talks to the terminal.
const EnvElicitSocket = "GOCODE_ELICIT_SOCKET"

// EnvElicitToken is the secret of this run the channel wants with every request: a program
// of another run that finds the socket cannot ask through it.
const EnvElicitToken = "GOCODE_ELICIT_TOKEN"

// EnvElicit is how a program without that channel (a gocode build binary run by hand)
// answers a server's elicitation: "defaults" (accept with the form's defaults; decline when
// a required field has none, and decline a URL) or "decline". Unset, elicitation is not
// declared, so servers know nobody can be asked.
const EnvElicit = "GOCODE_ELICIT"

const (
	maxElicitLine = 256 << 10        // an answer from the controller, serialised
	elicitWait    = 11 * time.Minute // the controller gives up after 10; a dead one is not waited for longer
)

type elicitHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)

// elicitation is the handler for server's elicitation requests, and the capability to
// declare with it; nil when nobody is there to answer.
func elicitation(server string) (elicitHandler, *mcp.ElicitationCapabilities) {
	if path := os.Getenv(EnvElicitSocket); path != "" {
		channel := sharedChannel(path, os.Getenv(EnvElicitToken))
		caps := &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
		return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return channel.ask(ctx, server, req.Params)
		}, caps
	}
	policy := os.Getenv(EnvElicit)
	if policy != "defaults" && policy != "decline" {
		return nil, nil
	}
	caps := &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}
	return func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		res, why := answerUnasked(policy, req.Params)
		fmt.Fprintf(os.Stderr, "gocode: %s asked %q: %s%s [%s=%s]\n", printable(server, 80), printable(req.Params.Message, 200), res.Action, why, EnvElicit, policy)
		return res, nil
	}, caps
}

// answerUnasked is the answer policy gives without asking, and why when it declines.
func answerUnasked(policy string, params *mcp.ElicitParams) (*mcp.ElicitResult, string) {
	if policy != "defaults" {
		return &mcp.ElicitResult{Action: "decline"}, ""
	}
	if params.Mode == "url" {
		return &mcp.ElicitResult{Action: "decline"}, " (a link is not agreed to on your behalf)"
	}
	content, err := formDefaults(params.RequestedSchema)
	if err != nil {
		return &mcp.ElicitResult{Action: "decline"}, " (" + err.Error() + ")"
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, ""
}

// formDefaults is the content that accepts every default of a requested schema.
func formDefaults(schema any) (map[string]any, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var form struct {
		Properties map[string]map[string]json.RawMessage `json:"properties"`
		Required   []string                              `json:"required"`
	}
	if err := json.Unmarshal(raw, &form); err != nil {
		return nil, fmt.Errorf("the requested schema is not a form: %v", err)
	}
	content := map[string]any{}
	for name, prop := range form.Properties {
		if def, ok := prop["default"]; ok {
			var v any
			if err := json.Unmarshal(def, &v); err == nil {
				content[name] = v
			}
		}
	}
	var missing []string
	for _, name := range form.Required {
		if _, ok := content[name]; !ok {
			missing = append(missing, printable(name, 80))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("required field(s) without a default: %s", strings.Join(missing, ", "))
	}
	return content, nil
}

// printable is server text for a terminal: control characters as '?', cut to limit runes.
func printable(s string, limit int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == limit {
			b.WriteString("…")
			break
		}
		if unicode.IsControl(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			r = '?'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// elicitChannel is the connection to the controller, shared by every session of the program:
// one request at a time, dialled again after a failure.
type elicitChannel struct {
	mu    sync.Mutex
	path  string
	token string
	conn  net.Conn
	r     *bufio.Reader
}

var (
	channelMu sync.Mutex
	channels  = map[string]*elicitChannel{}
)

func sharedChannel(path, token string) *elicitChannel {
	channelMu.Lock()
	defer channelMu.Unlock()
	if c := channels[path]; c != nil {
		return c
	}
	c := &elicitChannel{path: path, token: token}
	channels[path] = c
	return c
}

func (c *elicitChannel) ask(ctx context.Context, server string, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	res, err := c.roundTrip(ctx, server, params)
	if err != nil && c.conn != nil && !isRefusal(err) {
		c.conn.Close() // what is left on it belongs to no request: start afresh
		c.conn, c.r = nil, nil
	}
	return res, err
}

type refusal struct{ msg string }

func (r refusal) Error() string { return r.msg }

func isRefusal(err error) bool {
	var r refusal
	return errors.As(err, &r)
}

func (c *elicitChannel) roundTrip(ctx context.Context, server string, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if c.conn == nil {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "unix", c.path)
		if err != nil {
			return nil, fmt.Errorf("asking gocode: %w", err)
		}
		c.conn, c.r = conn, bufio.NewReader(conn)
	}
	deadline, ok := ctx.Deadline()
	if !ok || time.Until(deadline) > elicitWait {
		deadline = time.Now().Add(elicitWait)
	}
	c.conn.SetDeadline(deadline)
	conn := c.conn
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	line, err := json.Marshal(map[string]any{"token": c.token, "server": server, "params": params})
	if err != nil {
		return nil, err
	}
	if _, err := c.conn.Write(append(line, '\n')); err != nil {
		return nil, fmt.Errorf("asking gocode: %w", err)
	}
	answer, err := readLine(c.r, maxElicitLine)
	if err != nil {
		return nil, fmt.Errorf("asking gocode: %w", err)
	}
	var got struct {
		Result *mcp.ElicitResult `json:"result"`
		Error  string            `json:"error"`
	}
	if err := json.Unmarshal(answer, &got); err != nil {
		return nil, fmt.Errorf("asking gocode: %w", err)
	}
	if got.Result == nil {
		return nil, refusal{msg: got.Error}
	}
	return got.Result, nil
}

// readLine is one line of at most limit bytes, without its newline.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > limit {
			return nil, fmt.Errorf("an answer over %d bytes", limit)
		}
		if err == nil {
			return bytes.TrimSuffix(line, []byte("\n")), nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}
