//go:build !gocode_loopback

package rt

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The SDK's streamable connection puts the negotiated protocol version on every request after
// initialize (the Mcp-Protocol-Version header), learning it through a method of its own that
// the session calls and a wrapping taskConn cannot pass on. So when a streamable connection
// is wrapped, the taskConn reads the version from the initialize answer, before the SDK does,
// and the HTTP client (httpclient.go) sets the header the SDK would have: on each request that
// carries none of its own, from then on. A request the SDK gives a version itself (one it
// names in the message) keeps it.

// noteVersion tells the version an initialize answer settles on, if it names one.
func (c *taskConn) noteVersion(resp *jsonrpc.Response) {
	c.initialize.Store(nil)
	if resp.Error != nil {
		return
	}
	var result struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(resp.Result, &result) == nil && validVersion(result.ProtocolVersion) {
		c.negotiated(result.ProtocolVersion)
	}
}

// validVersion reports whether v has a protocol version's form (a date, YYYY-MM-DD): what the
// server answers is untrusted and goes into a header.
func validVersion(v string) bool {
	if len(v) != len("2025-11-25") {
		return false
	}
	for i, r := range v {
		if i == 4 || i == 7 {
			if r != '-' {
				return false
			}
		} else if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
