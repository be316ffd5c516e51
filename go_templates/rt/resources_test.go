//go:build !gocode_loopback

package rt

import (
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestTemplateMatches(t *testing.T) {
	tests := []struct {
		template, uri string
		want          bool
	}{
		{"vault://a/items/{id}", "vault://a/items/7", true},
		{"vault://a/items/{id}", "vault://a/items/7/more", false}, // a simple variable is one segment
		{"vault://a/items/{id}", "vault://b/items/7", false},
		{"file:///{+path}", "file:///etc/hosts", true},
		{"file:///{+path}", "http:///etc/hosts", false},
		{"a.b/{x}", "aXb/1", false}, // the literal parts are literal
		{"plain://uri", "plain://uri", true},
		{"plain://uri", "plain://uri2", false},
	}
	for _, tt := range tests {
		if got := templateMatches(tt.template, tt.uri); got != tt.want {
			t.Errorf("templateMatches(%q, %q) = %v, want %v", tt.template, tt.uri, got, tt.want)
		}
	}
}

func TestLiteralLength(t *testing.T) {
	if a, b, c := literalLength("{+uri}"), literalLength("file:///{+path}"), literalLength("vault://a/items/{id}"); !(a == 0 && a < b && b < c) {
		t.Fatalf("literalLength = %d, %d, %d", a, b, c)
	}
}

func TestSplitNamed(t *testing.T) {
	tests := []struct{ uri, server, raw string }{
		{"gocode://b/shared://doc", "b", "shared://doc"},
		{"gocode://b.c/x", "b.c", "x"},
		{"gocode://b/", "", "gocode://b/"},
		{"gocode:///x", "", "gocode:///x"},
		{"shared://doc", "", "shared://doc"},
	}
	for _, tt := range tests {
		if server, raw := splitNamed(tt.uri); server != tt.server || raw != tt.raw {
			t.Errorf("splitNamed(%q) = %q, %q; want %q, %q", tt.uri, server, raw, tt.server, tt.raw)
		}
	}
}

func TestContentKeepsEveryPart(t *testing.T) {
	pri := 0.5
	got := contentOf(fromSDK(&mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "a chart", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: pri}},
		&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte{7}},
		&mcp.ResourceLink{Name: "doc", URI: "file:///doc"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://t", MIMEType: "text/plain", Text: "inside"}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://b", MIMEType: "application/octet-stream", Blob: []byte{9}}},
	}}).Content)
	want := []Part{
		{Type: "text", Text: "a chart", Audience: []string{"user"}, Priority: 0.5},
		{Type: "audio", MIMEType: "audio/wav", Data: []byte{7}},
		{Type: "resource_link", URI: "file:///doc", Name: "doc"},
		{Type: "resource", URI: "mem://t", MIMEType: "text/plain", Text: "inside"},
		{Type: "resource", URI: "mem://b", MIMEType: "application/octet-stream", Data: []byte{9}},
	}
	if !reflect.DeepEqual(got.Parts, want) {
		t.Fatalf("Parts = %+v\nwant %+v", got.Parts, want)
	}
	if got.Text != "a chart\n[resource link doc file:///doc]\ninside" || len(got.Media) != 2 || got.Media[1].Data[0] != 9 {
		t.Fatalf("Content = %+v", got)
	}
}

func TestResourcesAndPromptsThroughTheController(t *testing.T) {
	lb := newLoopback(t)
	useServers(t, map[string]ServerSpec{"svc": {Transport: "http", URL: lb.URL}, controllerServer: {Transport: "http", URL: lb.URL}})
	ctx := testContext(t)

	contents, err := ReadResource(ctx, "mem://doc")
	if err != nil || len(contents) != 1 || !reflect.DeepEqual(contents[0].Blob, []byte{1, 2, 3}) {
		t.Fatalf("ReadResource = %+v, %v", contents, err)
	}
	if _, err := ReadResource(ctx, "mem://other"); err == nil || err.Error() != "readResource: no server lists mem://other" {
		t.Fatalf("a refused read is the controller's message: %v", err)
	}
	list, err := ListResources(ctx, "svc")
	want := []Resource{{Server: "svc", URI: "mem://doc", Name: "doc", Size: 3}, {Server: "svc", URI: "mem://{id}", Name: "any", Template: true}}
	if err != nil || !reflect.DeepEqual(list, want) {
		t.Fatalf("ListResources = %+v, %v", list, err)
	}
	p, err := GetPrompt(ctx, "svc.greet", map[string]string{"who": "Ann"})
	if err != nil || p.Description != "svc.greet" || len(p.Messages) != 2 {
		t.Fatalf("GetPrompt = %+v, %v", p, err)
	}
	if m := p.Messages[1].Content; m.Type != "image" || !reflect.DeepEqual(m.Data, []byte{1}) || m.Priority != 0.5 || !strings.Contains(p.Messages[0].Content.Text, "Ann") {
		t.Fatalf("GetPrompt's messages = %+v", p.Messages)
	}
}
