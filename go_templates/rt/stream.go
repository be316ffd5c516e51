package rt

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// EnvResultFile names the file a program writes its [Result] to when no controller runs it
// (gocode exec --direct); with a controller the value goes through its endpoint. A binary of
// gocode build without it prints the value on stdout, after what the program printed.
const EnvResultFile = "GOCODE_RESULT_FILE"

// A Progress is one progress notification a tool sent while [CallToolStream] waited for it.
type Progress struct {
	Progress float64 // how far it got (grows with every notification)
	Total    float64 // the total, when the tool knows it (else 0)
	Message  string  // what it is doing, if it said
}

// CallToolStream is [CallTool] for a tool that reports progress while it works: onProgress
// is called (from another goroutine, in order) with each notification until the call returns.
func CallToolStream(ctx context.Context, name string, args map[string]any, onProgress func(Progress)) (any, error) {
	server, tool, err := splitToolName(name)
	if err != nil {
		return nil, err
	}
	if onProgress == nil {
		onProgress = func(Progress) {}
	}
	var mu sync.Mutex // one notification at a time, so onProgress needs no lock of its own
	res, err := callWith(ctx, server, tool, args, func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		onProgress(p)
	})
	if err != nil {
		return nil, err
	}
	return decodeAny(res, server, tool)
}

var (
	resultMu  sync.Mutex
	resultRaw json.RawMessage
	resultErr error
)

// Result sets the run's structured result: v, as JSON, is returned beside what the program
// printed (structuredContent over MCP, a value in the Python API and in --json output). The
// last call wins; a value that cannot be encoded as JSON makes the run fail with the reason.
func Result(v any) {
	raw, err := json.Marshal(v)
	resultMu.Lock()
	defer resultMu.Unlock()
	if err != nil {
		resultRaw, resultErr = nil, fmt.Errorf("result(%T): the value cannot be encoded as JSON: %w", v, err)
		return
	}
	resultRaw, resultErr = raw, nil
}

// sendResult hands the value given to [Result] to whoever runs the program.
func sendResult(ctx context.Context) error {
	resultMu.Lock()
	raw, err := resultRaw, resultErr
	resultMu.Unlock()
	if err != nil || raw == nil {
		return err
	}
	specsOnce.Do(loadSpecs)
	if _, ok := specs[controllerServer]; ok {
		if _, err := call(ctx, controllerServer, "result", map[string]any{"value": raw}); err != nil {
			if te, ok := err.(*ToolError); ok {
				return fmt.Errorf("result: %s", te.Message)
			}
			return fmt.Errorf("result: %w", err)
		}
		return nil
	}
	if path := os.Getenv(EnvResultFile); path != "" {
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			return fmt.Errorf("result: %w", err)
		}
	} else if standalone {
		// A built binary has no one to hand it to: its caller reads it, one line of JSON.
		if _, err := os.Stdout.Write(append(raw, '\n')); err != nil {
			return fmt.Errorf("result: %w", err)
		}
	}
	return nil
}
