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

// public is a content block as the program sees it: an embedded resource's URI, MIME type and
// text or bytes on the part itself, the annotations as fields.
func (w part) public() Part {
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
	var w part
	if err := json.Unmarshal(raw, &w); err != nil {
		return err
	}
	*p = w.public()
	return nil
}

// contentOf is a result's content as Go values: every part in order, the text parts joined,
// and the images, audio and binary resources as [Media].
func contentOf(blocks []part) Content {
	var out Content
	var texts []string
	out.Parts = make([]Part, 0, len(blocks))
	for _, b := range blocks {
		out.Parts = append(out.Parts, b.public())
	}
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
