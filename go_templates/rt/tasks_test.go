//go:build !gocode_loopback

package rt

import (
	"strings"
	"testing"
	"time"
)

func TestParseTask(t *testing.T) {
	long := strings.Repeat("m", 5000)
	tests := []struct {
		name, raw string
		want      taskState
		err       string
	}{
		{"working", `{"taskId":"t1","status":"working","statusMessage":"go","pollInterval":250}`,
			taskState{id: "t1", status: "working", message: "go", poll: 250 * time.Millisecond}, ""},
		{"no poll interval", `{"taskId":"t1","status":"completed"}`,
			taskState{id: "t1", status: "completed", poll: taskPollDefault}, ""},
		{"poll kept from spinning", `{"taskId":"t1","status":"working","pollInterval":0}`,
			taskState{id: "t1", status: "working", poll: taskPollMin}, ""},
		{"poll kept from sleeping", `{"taskId":"t1","status":"working","pollInterval":1e15}`,
			taskState{id: "t1", status: "working", poll: taskPollMax}, ""},
		{"long message cut", `{"taskId":"t1","status":"working","statusMessage":"` + long + `"}`,
			taskState{id: "t1", status: "working", message: long[:taskMaxMessage], poll: taskPollDefault}, ""},
		{"not an object", `[1]`, taskState{}, "not a task"},
		{"no id", `{"status":"working"}`, taskState{}, "no usable taskId"},
		{"id not a string", `{"taskId":7,"status":"working"}`, taskState{}, "no usable taskId"},
		{"id too long", `{"taskId":"` + strings.Repeat("x", taskMaxID+1) + `","status":"working"}`, taskState{}, "no usable taskId"},
		{"garbage status", `{"taskId":"t1","status":"exploded"}`, taskState{id: "t1"}, "the status exploded, not one of"},
		{"status an object", `{"taskId":"t1","status":{"a":1}}`, taskState{id: "t1"}, "the status map[a:1], not one of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTask([]byte(tt.raw))
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("parseTask(%s) error = %v, want %q", tt.raw, err, tt.err)
			}
			if got != tt.want {
				t.Errorf("parseTask(%s) = %+v, want %+v", tt.raw, got, tt.want)
			}
		})
	}
}

func TestSameToken(t *testing.T) {
	tests := []struct {
		a, b any
		want bool
	}{
		{"gocode-1", "gocode-1", true},
		{"gocode-1", "gocode-2", false},
		{float64(3), float64(3), true},
		{"3", float64(3), false},
		{map[string]any{}, map[string]any{}, false}, // not comparable: never the same, never a panic
		{nil, nil, false},
	}
	for _, tt := range tests {
		if got := sameToken(tt.a, tt.b); got != tt.want {
			t.Errorf("sameToken(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
