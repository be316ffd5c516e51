package rt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// A Resource is a resource a server lists, or one of its templates (Template set, URI then
// the RFC 6570 template, such as "file:///{path}").
type Resource struct {
	Server      string `json:"server"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Size        int64  `json:"size,omitempty"`
	Template    bool   `json:"template,omitempty"`
}

// ResourceContents is one item a read returned: its text, or its bytes (Blob, decoded).
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     []byte `json:"blob,omitempty"`
}

// A PromptMessage is one message of a prompt: its role ("user", "assistant") and its content.
type PromptMessage struct {
	Role    string `json:"role"`
	Content Part   `json:"content"`
}

// A Prompt is what [GetPrompt] returns: the prompt's messages, filled in with its arguments.
type Prompt struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// NamedScheme names a URI with the server that owns it: "gocode://<server>/<uri>". Only
// needed when several servers have the same URI.
const NamedScheme = "gocode://"

const (
	maxListPages   = 20
	maxListEntries = 5000
	maxRemembered  = 1024 // URIs remembered per server, from its tools' results
	maxURI         = 8192
)

// The controller's own tools behind readResource, listResources and getPrompt (pooled runs).
const (
	readResourceTool  = "read_resource"
	listResourcesTool = "list_resources"
	getPromptTool     = "get_prompt"
)

// ReadResource reads a resource by its URI (from [ListResources], or a link or embedded
// resource a tool returned) from the one server that owns it: the server that lists the URI,
// else that returned it in a tool's result during this run, else whose template matches it.
// A URI several servers own must be named "gocode://<server>/<uri>"; even then it is read only
// from a server that owns it, so a link one server returned never reaches another.
func ReadResource(ctx context.Context, uri string) ([]ResourceContents, error) {
	if pooled() {
		var out struct {
			Contents []ResourceContents `json:"contents"`
		}
		err := controllerCall(ctx, readResourceTool, map[string]any{"uri": uri}, &out)
		return out.Contents, err
	}
	server, raw, err := owner(ctx, uri)
	if err != nil {
		return nil, err
	}
	return readFrom(ctx, server, raw)
}

// ListResources lists a server's resources and resource templates.
func ListResources(ctx context.Context, server string) ([]Resource, error) {
	if pooled() {
		var out struct {
			Resources []Resource `json:"resources"`
		}
		err := controllerCall(ctx, listResourcesTool, map[string]any{"server": server}, &out)
		return out.Resources, err
	}
	return listFrom(ctx, server)
}

// GetPrompt gets a prompt by its "server.prompt" name, filled in with args.
func GetPrompt(ctx context.Context, name string, args map[string]string) (Prompt, error) {
	if pooled() {
		var out Prompt
		err := controllerCall(ctx, getPromptTool, map[string]any{"name": name, "arguments": args}, &out)
		return out, err
	}
	server, prompt, err := splitToolName(name)
	if err != nil {
		return Prompt{}, fmt.Errorf("getPrompt: %q is not \"server.prompt\" for a known server", name)
	}
	return promptFrom(ctx, server, prompt, args)
}

// pooled says whether a controller runs this program (its sessions answer for the servers).
func pooled() bool {
	specsOnce.Do(loadSpecs)
	_, ok := specs[controllerServer]
	return ok
}

// controllerCall asks the controller one of its own tools and decodes its structured answer
// into out; the controller's refusal is the error. It goes through [call], the primitive every
// tool call uses.
func controllerCall(ctx context.Context, tool string, args map[string]any, out any) error {
	res, err := call(ctx, controllerServer, tool, args)
	if err != nil {
		var te *ToolError
		if errors.As(err, &te) {
			return errors.New(te.Message)
		}
		return err
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(raw, out)
	}
	if err != nil {
		return fmt.Errorf("%s: decoding the controller's answer: %w", tool, err)
	}
	return nil
}

// --- ownership, when the program has its own sessions -------------------------------------

var (
	rememberedMu sync.Mutex
	remembered   = map[string]map[string]bool{} // server -> URIs its tools returned
)

// rememberURIs notes the URIs of the links and embedded resources a server's tool returned:
// such a URI is then that server's to read. Without a controller only (a controller keeps its
// own record, which a program cannot write).
func rememberURIs(server string, content []part) {
	if pooled() {
		return
	}
	for _, b := range content {
		p := b.public()
		if (p.Type != "resource" && p.Type != "resource_link") || p.URI == "" || len(p.URI) > maxURI {
			continue
		}
		rememberedMu.Lock()
		seen := remembered[server]
		if seen == nil {
			seen = map[string]bool{}
			remembered[server] = seen
		}
		if len(seen) < maxRemembered {
			seen[p.URI] = true
		}
		rememberedMu.Unlock()
	}
}

// splitNamed is the server a "gocode://<server>/<uri>" names and the URI ("" and uri for any other).
func splitNamed(uri string) (string, string) {
	if rest, ok := strings.CutPrefix(uri, NamedScheme); ok {
		if server, raw, ok := strings.Cut(rest, "/"); ok && server != "" && raw != "" {
			return server, raw
		}
	}
	return "", uri
}

// owner finds the one server that owns uri (see [ReadResource]) among the configured ones.
func owner(ctx context.Context, uri string) (string, string, error) {
	if len(uri) > maxURI {
		return "", "", fmt.Errorf("readResource: the URI is %d characters; at most %d are accepted", len(uri), maxURI)
	}
	want, raw := splitNamed(uri)
	candidates := specNames()
	if want != "" {
		candidates = []string{want}
	}
	lists := make([][]Resource, len(candidates))
	var wg sync.WaitGroup
	for i, server := range candidates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lists[i], _ = listFrom(ctx, server) // a server that fails owns nothing
		}()
	}
	wg.Wait()
	pick := func(owns func(i int) bool) []string {
		var found []string
		for i, server := range candidates {
			if owns(i) {
				found = append(found, server)
			}
		}
		return found
	}
	owners := pick(func(i int) bool {
		for _, r := range lists[i] {
			if !r.Template && r.URI == raw {
				return true
			}
		}
		return false
	})
	if len(owners) == 0 { // before templates: a catch-all template claims no server's link
		rememberedMu.Lock()
		owners = pick(func(i int) bool { return remembered[candidates[i]][raw] })
		rememberedMu.Unlock()
	}
	if len(owners) == 0 { // the most specific template: a catch-all never beats another
		scores, top := make([]int, len(candidates)), 0
		for i := range candidates {
			scores[i] = -1
			for _, r := range lists[i] {
				if r.Template && templateMatches(r.URI, raw) {
					scores[i] = max(scores[i], literalLength(r.URI))
				}
			}
			top = max(top, scores[i])
		}
		owners = pick(func(i int) bool { return scores[i] >= 0 && scores[i] == top })
	}
	switch len(owners) {
	case 1:
		return owners[0], raw, nil
	case 0:
		if want != "" {
			return "", "", fmt.Errorf("readResource: server %q does not list %q, has no template matching it and did not return it", want, raw)
		}
		return "", "", fmt.Errorf("readResource: no server lists %q, has a template matching it or returned it (listResources(ctx, server) shows a server's)", raw)
	}
	named := make([]string, len(owners))
	for i, s := range owners {
		named[i] = fmt.Sprintf("%q", NamedScheme+s+"/"+raw)
	}
	return "", "", fmt.Errorf("readResource: several servers have %q: name the one to read (%s)", raw, strings.Join(named, ", "))
}

var templateVar = regexp.MustCompile(`\{([^}]*)\}`)

// templateMatches says whether uri is an expansion of an RFC 6570 template: a simple {var}
// stands for one path segment, a reserved or multi-part one ({+var}, {/var}, {?var} …) for any text.
func templateMatches(template, uri string) bool {
	var b strings.Builder
	b.WriteString("^(?s)")
	pos := 0
	for _, m := range templateVar.FindAllStringSubmatchIndex(template, -1) {
		b.WriteString(regexp.QuoteMeta(template[pos:m[0]]))
		name := template[m[2]:m[3]]
		if name != "" && (name[0] == '_' || isAlnum(name[0])) {
			b.WriteString(`[^/?#]*`)
		} else {
			b.WriteString(`.*`)
		}
		pos = m[1]
	}
	b.WriteString(regexp.QuoteMeta(template[pos:]) + "$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(uri)
}

// literalLength is how much of a template is literal text (the more, the more specific).
func literalLength(template string) int {
	return len(templateVar.ReplaceAllString(template, ""))
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
