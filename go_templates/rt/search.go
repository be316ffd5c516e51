package rt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// controllerServer is the pseudo-server through which a program reaches its controller: the
// tool search, and the run's structured result (the loopback endpoint serves it). It is in
// GOCODE_SERVERS only when a controller runs the program; no configured server name can
// start with "@".
const controllerServer = "@gocode"

// A ToolMatch is a tool found by [SearchTools].
type ToolMatch struct {
	Name        string `json:"name"`        // the MCP tool name
	Server      string `json:"server"`      // the server it belongs to
	Function    string `json:"function"`    // its typed Go function
	Description string `json:"description"` // what the tool says it does
	Signature   string `json:"signature"`   // the Go signature of Function
}

// SearchTools ranks the tools a program may call for a free-text query, best first (at most
// 10), with the same index as the search_go_tools tool.
func SearchTools(ctx context.Context, query string) ([]ToolMatch, error) {
	specsOnce.Do(loadSpecs)
	if specsErr != nil {
		return nil, specsErr
	}
	if _, ok := specs[controllerServer]; !ok {
		return nil, errors.New("searchTools needs gocode's tool index, which only a controller has " +
			"(execute_go_code, gocode exec without --direct, the Python API); call the typed functions or callTool instead")
	}
	res, err := call(ctx, controllerServer, "search_tools", map[string]any{"query": query})
	if err != nil {
		var te *ToolError
		if errors.As(err, &te) {
			return nil, errors.New("searchTools: " + te.Message)
		}
		return nil, fmt.Errorf("searchTools: %w", err)
	}
	var out struct {
		Matches []ToolMatch `json:"matches"`
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(raw, &out)
	}
	if err != nil {
		return nil, fmt.Errorf("searchTools: decoding the answer: %w", err)
	}
	return out.Matches, nil
}

// CallTool calls a tool by its "server.tool" name with arguments as a JSON object. The
// result is the tool's structured content if it has any, else its text decoded as JSON when
// the text is JSON, else the text itself; a tool error is returned as a [*ToolError].
func CallTool(ctx context.Context, name string, args map[string]any) (any, error) {
	server, tool, err := splitToolName(name)
	if err != nil {
		return nil, err
	}
	res, err := call(ctx, server, tool, args)
	if err != nil {
		return nil, err
	}
	return decodeAny(res, server, tool)
}

// decodeAny is [CallTool]'s result: the structured content, else JSON text decoded, else the text.
func decodeAny(res *toolResult, server, tool string) (any, error) {
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("tool %s (server %s): encoding its structured result: %w", tool, server, err)
		}
		var out any
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("tool %s (server %s): decoding its structured result: %w", tool, server, err)
		}
		return out, nil
	}
	text := textOf(res)
	var out any
	if json.Valid([]byte(text)) && json.Unmarshal([]byte(text), &out) == nil {
		return out, nil
	}
	return text, nil
}

// splitToolName finds the server in "server.tool": server and tool names may both contain
// dots, so the server is the longest configured name the text starts with.
func splitToolName(name string) (string, string, error) {
	specsOnce.Do(loadSpecs)
	if specsErr != nil {
		return "", "", specsErr
	}
	best := ""
	for server := range specs {
		if server != controllerServer && strings.HasPrefix(name, server+".") && len(server) > len(best) {
			best = server
		}
	}
	if best == "" || len(name) == len(best)+1 {
		known := specNames()
		sort.Strings(known)
		return "", "", fmt.Errorf("callTool: %q is not \"server.tool\" for a known server (servers: %s)", name, strings.Join(known, ", "))
	}
	return best, name[len(best)+1:], nil
}
