package rt

// A toolResult is a tool call's answer as both transports hand it over: the SDK's
// CallToolResult (sdk.go) or the loopback's JSON (loopback.go), read into the same shape so
// that every caller decodes and renders it the same way.
type toolResult struct {
	Content           []part
	StructuredContent any // as the SDK decodes it: JSON numbers are float64
	IsError           bool
}

// A part is one content block of a result; Type is its MCP type ("text", "image", "audio",
// "resource_link", "resource"), or for another kind the Go type the SDK gives it
// ("*mcp.ToolUseContent"), which is how [textOf] names it.
type part struct {
	Type     string            `json:"type"`
	Text     string            `json:"text"`
	MIMEType string            `json:"mimeType"`
	Data     []byte            `json:"data"`
	URI      string            `json:"uri"`
	Name     string            `json:"name"`
	Resource *resourceContents `json:"resource"`
	// Annotations: for whom the part is, how much it matters, when it last changed.
	Annotations *annotations `json:"annotations"`
}

type annotations struct {
	Audience     []string `json:"audience"`
	Priority     float64  `json:"priority"`
	LastModified string   `json:"lastModified"`
}

type resourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType"`
	Text     string `json:"text"`
	Blob     []byte `json:"blob"`
}
