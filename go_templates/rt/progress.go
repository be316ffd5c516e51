//go:build !gocode_loopback

package rt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK hands a call's response to the caller as soon as it is read, while notifications
// wait in a queue for its handler goroutine: a tool's last progress notification, sent before
// its response, could reach the caller's callback after the call returned (and be lost). So
// the transports count the progress notifications they read, before the SDK does, and a call
// that asked for progress waits, on return, until its callback has had every one of them.

// settleLimit bounds that wait: a notification counted but never handed over (the SDK dropped
// it) costs at most this much.
const settleLimit = 2 * time.Second

type progressWatch struct {
	fn      func(Progress)
	mu      sync.Mutex
	read    int // notifications read off the wire for this token
	handled int // of them, handed to fn
	changed chan struct{}
}

var (
	progressSeq     atomic.Int64
	progressWatches sync.Map // progress token (string) -> *progressWatch
)

// watchProgress registers fn under a fresh progress token until done is called; done first
// waits (within ctx and settleLimit) until fn has had every notification read for the token.
func watchProgress(fn func(Progress)) (token string, done func(context.Context)) {
	token = fmt.Sprintf("gocode-%d", progressSeq.Add(1))
	w := &progressWatch{fn: fn, changed: make(chan struct{}, 1)}
	progressWatches.Store(token, w)
	return token, func(ctx context.Context) {
		w.settle(ctx)
		progressWatches.Delete(token)
	}
}

func (w *progressWatch) settle(ctx context.Context) {
	timer := time.NewTimer(settleLimit)
	defer timer.Stop()
	for {
		w.mu.Lock()
		settled := w.handled >= w.read
		w.mu.Unlock()
		if settled {
			return
		}
		select {
		case <-w.changed:
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		}
	}
}

// onProgress hands a session's progress notification to the call that asked for it.
func onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	token, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	v, ok := progressWatches.Load(token)
	if !ok {
		return
	}
	w := v.(*progressWatch)
	w.fn(Progress{Progress: req.Params.Progress, Total: req.Params.Total, Message: req.Params.Message})
	w.mu.Lock()
	w.handled++
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

var progressMethod = []byte(`"notifications/progress"`)

// noteRead counts msg (one JSON-RPC message or batch, as read off a transport) for the call
// whose progress it reports, if it is a progress notification someone watches.
func noteRead(msg []byte) {
	if !bytes.Contains(msg, progressMethod) {
		return // the common case, without decoding
	}
	var batch []json.RawMessage
	if json.Unmarshal(msg, &batch) == nil {
		for _, m := range batch { // a batch holds messages, never batches: one level only
			noteOne(m)
		}
		return
	}
	noteOne(msg)
}

func noteOne(msg []byte) {
	var one struct {
		Method string `json:"method"`
		Params struct {
			ProgressToken any `json:"progressToken"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &one) != nil || one.Method != "notifications/progress" {
		return
	}
	token, ok := one.Params.ProgressToken.(string)
	if !ok {
		return
	}
	if v, ok := progressWatches.Load(token); ok {
		w := v.(*progressWatch)
		w.mu.Lock()
		w.read++
		w.mu.Unlock()
	}
}
