package rt

import (
	"context"
	"encoding/json"
	"strings"
)

// A Part is one part of a tool's result or of a prompt's message, as the server sent it.
type Part struct {
	Type     string // "text", "image", "audio", "resource" (embedded) or "resource_link"
	Text     string // a text part's text, or an embedded text resource's
	MIMEType string // an image's, audio's or resource's MIME type
	Data     []byte // an image's or audio's bytes, or an embedded binary resource's (decoded)
	URI      string // an embedded resource's or a link's URI: [ReadResource] reads it
	Name     string // a link's name
	// The part's annotations, when the server gave them: for whom ("user", "assistant"), how
	// much it matters (0 to 1), when it last changed.
	Audience     []string
	Priority     float64
	LastModified string
}

// wirePart is a content block as MCP puts it on the wire (and the SDK marshals it).
type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"data"`
	URI      string `json:"uri"`
	Name     string `json:"name"`
	Resource *struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
		Text     string `json:"text"`
		Blob     []byte `json:"blob"`
	} `json:"resource"`
	Annotations *struct {
		Audience     []string `json:"audience"`
		Priority     float64  `json:"priority"`
		LastModified string   `json:"lastModified"`
	} `json:"annotations"`
}

func (w wirePart) part() Part {
	p := Part{Type: w.Type, Text: w.Text, MIMEType: w.MIMEType, Data: w.Data, URI: w.URI, Name: w.Name}
	if r := w.Resource; r != nil {
		p.URI, p.MIMEType, p.Text, p.Data = r.URI, r.MIMEType, r.Text, r.Blob
	}
	if a := w.Annotations; a != nil {
		p.Audience, p.Priority, p.LastModified = a.Audience, a.Priority, a.LastModified
	}
	return p
}

// UnmarshalJSON reads a content block in MCP's wire form.
func (p *Part) UnmarshalJSON(raw []byte) error {
	var w wirePart
	if err := json.Unmarshal(raw, &w); err != nil {
		return err
	}
	*p = w.part()
	return nil
}

// partsOf decodes content blocks in wire form (what the SDK marshals, or the controller sends);
// a block that does not decode becomes a text note saying what it was.
func partsOf(blocks []json.RawMessage) []Part {
	parts := make([]Part, 0, len(blocks))
	for _, raw := range blocks {
		var p Part
		if err := json.Unmarshal(raw, &p); err != nil {
			p = Part{Type: "text", Text: "[a content part that does not decode: " + clip(string(raw)) + "]"}
		}
		parts = append(parts, p)
	}
	return parts
}

// contentOf is a result's content as Go values: every part in order, the text parts joined,
// and the images, audio and binary resources as [Media].
func contentOf(blocks []json.RawMessage) Content {
	var out Content
	var texts []string
	out.Parts = partsOf(blocks)
	for _, p := range out.Parts {
		switch {
		case p.Type == "image" || p.Type == "audio" || (p.Type == "resource" && p.Data != nil):
			out.Media = append(out.Media, Media{MIMEType: p.MIMEType, Data: p.Data})
		case p.Type == "resource_link":
			texts = append(texts, "[resource link "+p.Name+" "+p.URI+"]")
		default:
			texts = append(texts, p.Text)
		}
	}
	out.Text = strings.Join(texts, "\n")
	return out
}

// CallToolContent calls a tool by its "server.tool" name and returns its whole result as Go
// values, whatever the tool declares: text, images and audio as bytes with their MIME type,
// embedded resources, resource links (read with [ReadResource]), annotations kept.
func CallToolContent(ctx context.Context, name string, args map[string]any) (Content, error) {
	server, tool, err := splitToolName(name)
	if err != nil {
		return Content{}, err
	}
	return CallContent(ctx, server, tool, args)
}
