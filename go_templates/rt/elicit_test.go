//go:build !gocode_loopback

package rt

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestFormDefaults(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		want    map[string]any
		wantErr string
	}{
		{"every default", `{"type":"object","properties":{"a":{"type":"string","default":"x"},"n":{"type":"integer","default":3}}}`,
			map[string]any{"a": "x", "n": float64(3)}, ""},
		{"optional without one", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"boolean","default":true}}}`,
			map[string]any{"b": true}, ""},
		{"required without one", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
			nil, "required field(s) without a default: a"},
		{"no form", `[1]`, nil, "not a form"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var schema any
			if err := json.Unmarshal([]byte(tt.schema), &schema); err != nil {
				t.Fatal(err)
			}
			got, err := formDefaults(schema)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestAnswerUnasked(t *testing.T) {
	form := &mcp.ElicitParams{Message: "m", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string", "default": "d"}}}}
	if res, _ := answerUnasked("decline", form); res.Action != "decline" || res.Content != nil {
		t.Errorf("decline: %+v", res)
	}
	if res, _ := answerUnasked("defaults", form); res.Action != "accept" || res.Content["a"] != "d" {
		t.Errorf("defaults: %+v", res)
	}
	link := &mcp.ElicitParams{Mode: "url", Message: "m", URL: "https://example.com", ElicitationID: "1"}
	if res, why := answerUnasked("defaults", link); res.Action != "decline" || why == "" {
		t.Errorf("a link under defaults: %+v %q", res, why)
	}
}

func TestPrintable(t *testing.T) {
	if got := printable("a\x1b]0;t\x07b\u202ec", 80); got != "a?]0;t?b?c" {
		t.Errorf("printable = %q", got)
	}
	if got := printable("abcdef", 3); got != "abc…" {
		t.Errorf("cut = %q", got)
	}
}

// controller stands in for gocode's end of the channel: answer says what to do with each line.
func controller(t *testing.T, answer func(line string, conn net.Conn) bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					line, err := r.ReadString('\n')
					if err != nil || !answer(line, conn) {
						return
					}
				}
			}()
		}
	}()
	return path
}

func TestElicitChannel(t *testing.T) {
	params := &mcp.ElicitParams{Message: "m", RequestedSchema: map[string]any{"type": "object"}}
	t.Run("answered", func(t *testing.T) {
		path := controller(t, func(line string, conn net.Conn) bool {
			var req struct {
				Token  string            `json:"token"`
				Server string            `json:"server"`
				Params *mcp.ElicitParams `json:"params"`
			}
			if json.Unmarshal([]byte(line), &req) != nil || req.Token != "run-secret" || req.Server != "weather" || req.Params.Message != "m" {
				conn.Write([]byte(`{"error":"bad request"}` + "\n"))
				return true
			}
			conn.Write([]byte(`{"result":{"action":"accept","content":{"a":"b"}}}` + "\n"))
			return true
		})
		c := &elicitChannel{path: path, token: "run-secret"}
		for i := 0; i < 2; i++ { // the connection serves the next request too
			res, err := c.ask(context.Background(), "weather", params)
			if err != nil || res.Action != "accept" || res.Content["a"] != "b" {
				t.Fatalf("ask = %+v, %v", res, err)
			}
		}
	})
	t.Run("refused", func(t *testing.T) {
		path := controller(t, func(line string, conn net.Conn) bool {
			conn.Write([]byte(`{"error":"at most 32 requests"}` + "\n"))
			return true
		})
		c := &elicitChannel{path: path}
		if _, err := c.ask(context.Background(), "s", params); err == nil || err.Error() != "at most 32 requests" {
			t.Fatalf("err = %v", err)
		}
		if c.conn == nil {
			t.Error("a refusal dropped the connection")
		}
	})
	t.Run("an oversized answer", func(t *testing.T) {
		path := controller(t, func(line string, conn net.Conn) bool {
			conn.Write([]byte(strings.Repeat("x", maxElicitLine+10) + "\n"))
			return true
		})
		c := &elicitChannel{path: path}
		if _, err := c.ask(context.Background(), "s", params); err == nil || !strings.Contains(err.Error(), "over") {
			t.Fatalf("err = %v", err)
		}
		if c.conn != nil {
			t.Error("the connection was kept after a broken answer")
		}
	})
	t.Run("never answered", func(t *testing.T) {
		path := controller(t, func(string, net.Conn) bool { time.Sleep(time.Minute); return false })
		c := &elicitChannel{path: path}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := c.ask(ctx, "s", params); err == nil {
			t.Fatal("no error")
		}
		if time.Since(start) > 10*time.Second {
			t.Errorf("waited %s past the call's deadline", time.Since(start))
		}
	})
}
