// Package rt is the runtime behind gocode's generated tool bindings.
//
// It reads how to reach each MCP server from the GOCODE_SERVERS environment variable (JSON,
// written by the gocode controller, so that commands, URLs and secrets never appear in
// generated source), reaches a server the first time one of its tools is called, and decodes
// tool results into Go values.
//
// Two transports share this API, chosen by a build tag. By default (sdk.go) each server gets
// one session of the MCP Go SDK shared by all goroutines: stdio, streamable HTTP or SSE, for
// programs that start or dial their servers themselves (gocode exec --direct, gocode build).
// With the tag gocode_loopback (loopback.go) the program reaches every server through the
// controller's loopback endpoint with a few lines of HTTP/1.1 over package net: no SDK, no
// net/http, so a pooled program links in a fraction of the time.
//
// A program calls [Main] with its Run function; Main cancels the context on SIGINT/SIGTERM,
// closes every session when Run returns and turns a returned error into exit status 1.
package rt

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
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
	// SignsIn: the server is configured with OAuth (its Authorization header, if any, is the
	// controller's kept access token): a 401 or 403 points at the sign-in, not the config.
	SignsIn bool `json:"signsIn,omitempty"`
}

// A ToolError is a tool call that the server answered with isError: the tool's own message.
type ToolError struct {
	Server, Tool, Message string
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("tool %s (server %s) failed: %s", e.Tool, e.Server, e.Message)
}

var (
	specsOnce sync.Once
	specs     map[string]ServerSpec
	specsErr  error
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

// specFor is the spec of a configured server, or why there is none.
func specFor(server string) (ServerSpec, error) {
	specsOnce.Do(loadSpecs)
	if specsErr != nil {
		return ServerSpec{}, specsErr
	}
	spec, ok := specs[server]
	if !ok {
		return ServerSpec{}, fmt.Errorf("server %q is not configured (known: %s)", server, strings.Join(specNames(), ", "))
	}
	return spec, nil
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
func call(ctx context.Context, server, tool string, args any) (*toolResult, error) {
	return callWith(ctx, server, tool, args, nil)
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
	text := textOf(res)
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
		raw = []byte(textOf(res))
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
	return textOf(res), nil
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
	out := contentOf(res.Content)
	if out.Text == "" && len(out.Media) == 0 && res.StructuredContent != nil {
		out.Text = textOf(res)
	}
	return out, nil
}

// textOf renders a result's content as text: text parts as they are, joined by newlines;
// other parts as a short bracketed note; the structured content as JSON when there is no
// content at all. It never fails, whatever the result holds.
func textOf(res *toolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c.Type {
		case "text":
			parts = append(parts, c.Text)
		case "image":
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case "audio":
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case "resource_link":
			parts = append(parts, fmt.Sprintf("[resource link %s %s]", c.Name, c.URI))
		case "resource":
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s, %d bytes]", c.Resource.URI, len(c.Resource.Blob)))
			}
		default:
			parts = append(parts, "["+c.Type+"]")
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
