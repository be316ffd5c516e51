//go:build !gocode_loopback

package rt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool whose listing says execution.taskSupport "required" answers tools/call only as an MCP
// task (2025-11-25): the request carries a "task" field, the server answers at once with a
// CreateTaskResult, tasks/get tells how the task goes, tasks/result answers the call's own
// result once the task has ended, and tasks/cancel stops it. The SDK (v1.8.0) knows none of
// this, so a taskConn sits between a session and its connection and makes a call of such a
// tool one ordinary call for the SDK: it adds the task field, holds back the CreateTaskResult,
// drives the task with requests of its own (ids the SDK never sees), and hands the SDK
// tasks/result's answer as the call's response. While the task runs, its status messages reach
// the call's progress callback (unless the server sends progress for the call's token itself,
// which passes through as usual); when the call's context ends, or the session closes first,
// the task is cancelled. What the server answers is untrusted: a task without a usable id, a
// status outside the spec's five or another task's state ends the call with an error and
// cancels the task.

const (
	taskPollDefault = time.Second // between two tasks/get, when the server suggests nothing
	taskPollMin     = 50 * time.Millisecond
	taskPollMax     = 5 * time.Second
	taskCancelLimit = 5 * time.Second // for tasks/cancel's answer once the call is over
	taskMaxID       = 256
	taskMaxMessage  = 1024
)

var taskStatuses = map[string]bool{"working": true, "input_required": true, "completed": true, "failed": true, "cancelled": true}

func taskTerminal(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// A taskTransport is an [mcp.Transport] whose connection runs the calls of tools (task-only
// tools of the server, by name) as tasks.
type taskTransport struct {
	inner      mcp.Transport
	tools      map[string]bool
	negotiated func(version string) // told the protocol version initialize settled on, if not nil
}

// withTasks wraps t when the server has task-only tools. negotiated (nil for a transport that
// needs no telling) hears the protocol version the server's initialize answer settles on: a
// streamable connection learns it from the SDK through a method a wrapper cannot pass on, so
// its HTTP client sets the version header instead (see taskhttp.go).
func withTasks(t mcp.Transport, tools []string, negotiated func(string)) mcp.Transport {
	if len(tools) == 0 {
		return t
	}
	set := make(map[string]bool, len(tools))
	for _, name := range tools {
		set[name] = true
	}
	return &taskTransport{inner: t, tools: set, negotiated: negotiated}
}

func (t *taskTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	inner, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	c := &taskConn{
		Connection: inner,
		tools:      t.tools,
		negotiated: t.negotiated,
		calls:      map[string]*taskCall{},
		own:        map[string]chan *jsonrpc.Response{},
		out:        make(chan jsonrpc.Message),
		closing:    make(chan struct{}),
		stopped:    make(chan struct{}),
	}
	go c.pump()
	return c, nil
}

type taskConn struct {
	mcp.Connection
	tools      map[string]bool
	negotiated func(string)
	initialize atomic.Pointer[jsonrpc.ID] // the SDK's initialize request, once sent

	mu    sync.Mutex
	calls map[string]*taskCall              // the task-only calls in flight, by the SDK's request id
	own   map[string]chan *jsonrpc.Response // this conn's own requests, by id
	seq   atomic.Int64

	out       chan jsonrpc.Message // what the SDK reads
	readErr   error                // why the pump stopped (set before stopped is closed)
	closing   chan struct{}        // closed by Close: drivers cancel their tasks
	stopped   chan struct{}        // closed when the inner connection can be read no more
	closeOnce sync.Once
	drivers   sync.WaitGroup
}

// A taskCall is one call of a task-only tool, as the SDK made it.
type taskCall struct {
	id           jsonrpc.ID
	tool         string
	token        any             // the call's progress token, or nil
	ctx          context.Context // the caller's: when it ends, so does the task
	serverSpeaks atomic.Bool     // the server sent progress for token itself
	started      atomic.Bool     // the server made the task: a driver follows it
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

func (c *taskConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	switch {
	case req.Method == "initialize" && req.IsCall() && c.negotiated != nil:
		id := req.ID
		c.initialize.Store(&id)
	case req.Method == "tools/call" && req.IsCall():
		var params map[string]json.RawMessage
		if json.Unmarshal(req.Params, &params) != nil {
			break
		}
		var name string
		_ = json.Unmarshal(params["name"], &name)
		if !c.tools[name] {
			break
		}
		var meta struct {
			ProgressToken any `json:"progressToken"`
		}
		_ = json.Unmarshal(params["_meta"], &meta)
		params["task"] = json.RawMessage(`{}`)
		raw, err := json.Marshal(params)
		if err != nil {
			return err
		}
		call := &taskCall{id: req.ID, tool: name, token: meta.ProgressToken, ctx: ctx}
		c.mu.Lock()
		c.calls[idKey(req.ID)] = call
		c.mu.Unlock()
		return c.Connection.Write(ctx, &jsonrpc.Request{ID: req.ID, Method: req.Method, Params: raw, Extra: req.Extra})
	case req.Method == "notifications/cancelled":
		// A task is stopped with tasks/cancel (its driver sends it when the call's context
		// ends), never by cancelling the request that created it.
		var params struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &params) == nil {
			if id, err := jsonrpc.MakeID(params.RequestID); err == nil {
				c.mu.Lock()
				call := c.calls[idKey(id)]
				c.mu.Unlock()
				if call != nil && call.started.Load() {
					return nil
				}
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.out:
		return msg, nil
	case <-c.stopped:
		return nil, c.readErr
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// pump reads the inner connection: the answers to this conn's own requests go to their
// drivers, a CreateTaskResult starts a driver, the rest goes to the SDK.
func (c *taskConn) pump() {
	defer close(c.stopped)
	for {
		msg, err := c.Connection.Read(context.Background())
		if err != nil {
			c.readErr = err
			return
		}
		if !c.route(msg) {
			select {
			case c.out <- msg:
			case <-c.closing:
			}
		}
	}
}

// route takes msg if it is this conn's business (see pump), reporting whether it did.
func (c *taskConn) route(msg jsonrpc.Message) bool {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		key := idKey(m.ID)
		if init := c.initialize.Load(); init != nil && idKey(*init) == key {
			c.noteVersion(m) // before the SDK reads it: its next request already needs the header
			return false
		}
		c.mu.Lock()
		wait, mine := c.own[key]
		call := c.calls[key]
		c.mu.Unlock()
		if mine {
			select {
			case wait <- m:
			default: // a second answer to one request: a server's mistake, dropped
			}
			return true
		}
		if call == nil || call.started.Load() {
			return false // a second answer to the call goes to the SDK, which ignores it
		}
		var created struct {
			Task json.RawMessage `json:"task"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &created) != nil || created.Task == nil {
			c.forget(call) // an error, or the server did the work at once
			return false
		}
		call.started.Store(true)
		c.drivers.Add(1)
		go c.drive(call, created.Task)
		return true
	case *jsonrpc.Request:
		switch m.Method {
		case "notifications/tasks/status":
			return true // the driver polls; the SDK knows no such notification
		case "notifications/progress":
			var p struct {
				ProgressToken any `json:"progressToken"`
			}
			if json.Unmarshal(m.Params, &p) == nil && p.ProgressToken != nil {
				c.mu.Lock()
				for _, call := range c.calls {
					if sameToken(call.token, p.ProgressToken) {
						call.serverSpeaks.Store(true)
					}
				}
				c.mu.Unlock()
			}
		}
	}
	return false
}

// forget drops a call once its answer is the SDK's.
func (c *taskConn) forget(call *taskCall) {
	c.mu.Lock()
	delete(c.calls, idKey(call.id))
	c.mu.Unlock()
}

// sameToken reports whether two progress tokens, as JSON decodes them, are the same.
func sameToken(a, b any) bool {
	switch a := a.(type) {
	case string:
		b, ok := b.(string)
		return ok && a == b
	case float64:
		b, ok := b.(float64)
		return ok && a == b
	}
	return false
}

// A taskState is what a driver reads of a task the server reported, each part checked.
type taskState struct {
	id, status, message string
	poll                time.Duration
}

func parseTask(raw json.RawMessage) (taskState, error) {
	var t struct {
		TaskID        any `json:"taskId"`
		Status        any `json:"status"`
		StatusMessage any `json:"statusMessage"`
		PollInterval  any `json:"pollInterval"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return taskState{}, errors.New("the answer is not a task")
	}
	id, ok := t.TaskID.(string)
	if !ok || id == "" || len(id) > taskMaxID {
		return taskState{}, errors.New("the task has no usable taskId")
	}
	status, _ := t.Status.(string)
	if !taskStatuses[status] {
		return taskState{id: id}, fmt.Errorf("the task has the status %s, not one of working, input_required, completed, failed, cancelled", clip(fmt.Sprint(t.Status)))
	}
	s := taskState{id: id, status: status, poll: taskPollDefault}
	if msg, ok := t.StatusMessage.(string); ok {
		if len(msg) > taskMaxMessage {
			msg = msg[:taskMaxMessage]
		}
		s.message = msg
	}
	if ms, ok := t.PollInterval.(float64); ok && !math.IsNaN(ms) {
		// Bounded before the conversion: a huge interval would overflow a Duration.
		ms = min(max(ms, float64(taskPollMin/time.Millisecond)), float64(taskPollMax/time.Millisecond))
		s.poll = time.Duration(ms * float64(time.Millisecond))
	}
	return s, nil
}

// drive follows one task to its end and answers its call (see the top of this file).
func (c *taskConn) drive(call *taskCall, raw json.RawMessage) {
	defer c.drivers.Done()
	defer c.forget(call)
	task, err := parseTask(raw)
	if err != nil {
		c.fail(call, err)
		if task.id != "" {
			c.cancelTask(task.id)
		}
		return
	}
	steps, last := 0, ""
	report := func(s taskState) {
		message := s.message
		if message == "" {
			message = s.status
		}
		// Each new message once: a task that ends keeping its last message (working, then
		// completed, both "Generating report...") says nothing new.
		if call.token == nil || call.serverSpeaks.Load() || message == last {
			return
		}
		steps++
		last = message
		c.progress(call.token, float64(steps), message)
	}
	if task.message != "" {
		report(task)
	}
	ctx, stop := context.WithCancel(call.ctx)
	defer stop()
	go func() {
		select {
		case <-c.closing: // the session closes before the task ended: stop it
			stop()
		case <-ctx.Done():
		}
	}()
	result := make(chan *jsonrpc.Response, 1)
	resultErr := make(chan error, 1)
	go func() {
		r, err := c.request(ctx, "tasks/result", map[string]any{"taskId": task.id})
		if err != nil {
			resultErr <- err
			return
		}
		result <- r
	}()
	ticker := time.NewTicker(task.poll)
	defer ticker.Stop()
	for {
		select {
		case r := <-result:
			c.deliver(&jsonrpc.Response{ID: call.id, Result: r.Result, Error: r.Error})
			return
		case <-resultErr:
			c.cancelTask(task.id) // the call's context ended, or the session closes
			return
		case <-ticker.C:
			if taskTerminal(task.status) {
				continue // tasks/result answers now
			}
			r, err := c.request(ctx, "tasks/get", map[string]any{"taskId": task.id})
			if err != nil {
				c.cancelTask(task.id)
				return
			}
			if r.Error != nil {
				continue // a server that cannot tell is waited for; tasks/result still answers
			}
			now, err := parseTask(r.Result)
			if err == nil && now.id != task.id {
				err = errors.New("tasks/get answered about another task")
			}
			if err != nil {
				c.fail(call, err)
				c.cancelTask(task.id)
				return
			}
			if now.status != task.status || now.message != task.message {
				report(now)
			}
			task = now
		}
	}
}

// request sends a request of this conn's own and waits for its answer.
func (c *taskConn) request(ctx context.Context, method string, params any) (*jsonrpc.Response, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	id, err := jsonrpc.MakeID(fmt.Sprintf("gocode-task-%d", c.seq.Add(1)))
	if err != nil {
		return nil, err
	}
	key := idKey(id)
	wait := make(chan *jsonrpc.Response, 1)
	c.mu.Lock()
	c.own[key] = wait
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.own, key)
		c.mu.Unlock()
	}()
	if err := c.Connection.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: raw}); err != nil {
		return nil, err
	}
	select {
	case r := <-wait:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.stopped:
		return nil, c.readErr
	}
}

// cancelTask asks the server to stop a task, within taskCancelLimit; a task already over is
// refused, which is as good.
func (c *taskConn) cancelTask(id string) {
	ctx, stop := context.WithTimeout(context.Background(), taskCancelLimit)
	defer stop()
	_, _ = c.request(ctx, "tasks/cancel", map[string]any{"taskId": id})
}

// fail answers a call with an error the SDK returns to its caller.
func (c *taskConn) fail(call *taskCall, err error) {
	c.deliver(&jsonrpc.Response{ID: call.id, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("the server's task for %s: %v", call.tool, err),
	}})
}

// deliver hands the SDK a message as if the server had sent it (nobody takes it once closing).
func (c *taskConn) deliver(msg jsonrpc.Message) {
	select {
	case c.out <- msg:
	case <-c.closing:
	case <-c.stopped:
	}
}

// progress reports a task's status to its call as a progress notification.
func (c *taskConn) progress(token any, n float64, message string) {
	params, err := json.Marshal(map[string]any{"progressToken": token, "progress": n, "message": message})
	if err != nil {
		return
	}
	note := &jsonrpc.Request{Method: "notifications/progress", Params: params}
	if wire, err := jsonrpc.EncodeMessage(note); err == nil {
		noteRead(wire) // counted as the transports count what they read: the call waits for it
	}
	c.deliver(note)
}

// Close cancels the tasks still running (each within taskCancelLimit), then closes the
// connection.
func (c *taskConn) Close() error {
	c.closeOnce.Do(func() { close(c.closing) })
	done := make(chan struct{})
	go func() {
		c.drivers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(taskCancelLimit):
	}
	return c.Connection.Close()
}
