//go:build !gocode_loopback

package rt

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listFrom lists a server's resources and templates over the program's own session (bounded:
// maxListPages pages, maxListEntries entries of each kind). A server that declares no
// resources has none.
func listFrom(ctx context.Context, server string) ([]Resource, error) {
	s, err := Session(ctx, server)
	if err != nil {
		return nil, err
	}
	if init := s.InitializeResult(); init != nil && init.Capabilities != nil && init.Capabilities.Resources == nil {
		return nil, nil
	}
	var out []Resource
	cursor, n := "", 0
	for page := 0; page < maxListPages && n < maxListEntries; page++ {
		res, err := s.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, fmt.Errorf("listing the resources of server %s: %w", server, err)
		}
		for _, r := range res.Resources[:min(len(res.Resources), maxListEntries-n)] {
			out = append(out, Resource{Server: server, URI: r.URI, Name: r.Name, Title: r.Title,
				Description: r.Description, MIMEType: r.MIMEType, Size: r.Size})
			n++
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	cursor, n = "", 0
	for page := 0; page < maxListPages && n < maxListEntries; page++ {
		res, err := s.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			break // templates are optional: a server without them still lists its resources
		}
		for _, t := range res.ResourceTemplates[:min(len(res.ResourceTemplates), maxListEntries-n)] {
			out = append(out, Resource{Server: server, URI: t.URITemplate, Name: t.Name, Title: t.Title,
				Description: t.Description, MIMEType: t.MIMEType, Template: true})
			n++
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	return out, nil
}

// readFrom reads a resource from the server that owns it, over the program's own session.
func readFrom(ctx context.Context, server, uri string) ([]ResourceContents, error) {
	s, err := Session(ctx, server)
	if err != nil {
		return nil, err
	}
	res, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, fmt.Errorf("reading resource %s (server %s): %w", uri, server, err)
	}
	out := make([]ResourceContents, 0, len(res.Contents))
	for _, c := range res.Contents {
		if c != nil {
			out = append(out, ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text, Blob: c.Blob})
		}
	}
	return out, nil
}

// promptFrom gets a prompt over the program's own session.
func promptFrom(ctx context.Context, server, name string, args map[string]string) (Prompt, error) {
	s, err := Session(ctx, server)
	if err != nil {
		return Prompt{}, err
	}
	res, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return Prompt{}, fmt.Errorf("getting prompt %s (server %s): %w", name, server, err)
	}
	out := Prompt{Description: res.Description}
	for _, m := range res.Messages {
		if m == nil {
			continue
		}
		var part Part
		raw, err := json.Marshal(m.Content)
		if err == nil {
			err = json.Unmarshal(raw, &part)
		}
		if err != nil {
			part = Part{Type: "text", Text: fmt.Sprintf("[%T]", m.Content)}
		}
		out.Messages = append(out.Messages, PromptMessage{Role: string(m.Role), Content: part})
	}
	return out, nil
}
