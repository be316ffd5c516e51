package rt

import (
	"context"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A step pass (the controller's step protocol) ends when the program can only wait for the
// client calls the controller holds until the next pass. The controller sees calls, not
// goroutines; only the program can tell that none of its goroutines can go on. So on a step
// pass (EnvIdle set) a watcher goroutine looks at every goroutine whenever a tool call is
// outstanding, and tells the controller what it saw with the counts of calls started and
// finished at that moment ([idleReport]). The controller ends the pass at once on an "idle"
// report whose counts match what it holds, and keeps a "busy" program's pass open; otherwise
// (an "unknown" state, or no report) its wall-clock grace period decides, as before.

// EnvIdle is set by the controller on a step pass, to the pass's grace period in seconds.
const EnvIdle = "GOCODE_STEP_IDLE"

const idleTool = "idle" // the controller's tool the reports go to

const (
	// Every goroutine waits on an outstanding tool call, or on another goroutine (a channel,
	// a select, a sync wait) with nothing else that could wake it.
	verdictIdle = "idle"
	// A goroutine is running or runnable: the program goes on by itself.
	verdictBusy = "busy"
	// A goroutine sleeps, waits in a system call, on I/O of its own, or inside a library call:
	// it may go on after a while, and nothing here can tell when.
	verdictUnknown = "unknown"
)

// An idleReport is what the watcher saw: the verdict, and the program's tool calls (to servers,
// not to the controller) started and finished when it looked.
type idleReport struct {
	Verdict  string `json:"verdict"`
	Started  int64  `json:"started"`
	Finished int64  `json:"finished"`
}

var (
	idlePeriod = sync.OnceValue(func() time.Duration {
		grace, err := strconv.ParseFloat(os.Getenv(EnvIdle), 64)
		if err != nil || grace <= 0 {
			return 0 // not a step pass: nothing is watched
		}
		// A busy program is reported again within a quarter of the grace period, so the
		// controller does not see it quiet that long even when a report is late.
		return max(time.Duration(grace*float64(time.Second)/4), 10*time.Millisecond)
	})
	callsStarted, callsFinished atomic.Int64
	controllerCalls             atomic.Int64 // searchTools, result(): answered by the controller itself
	watchKick                   = make(chan struct{}, 1)
	watchOnce                   sync.Once
)

type watcherKey struct{}

// trackCall counts a tool call the program starts and wakes the watcher; the function it
// returns marks the call's end. The watcher's own reports are not counted.
func trackCall(ctx context.Context, server string) func() {
	if idlePeriod() == 0 || ctx.Value(watcherKey{}) != nil {
		return func() {}
	}
	if server == controllerServer {
		controllerCalls.Add(1)
		return func() { controllerCalls.Add(-1); kickWatcher() }
	}
	watchOnce.Do(func() { go watch(idlePeriod()) })
	callsStarted.Add(1)
	kickWatcher()
	return func() { callsFinished.Add(1); kickWatcher() }
}

func kickWatcher() {
	select {
	case watchKick <- struct{}{}:
	default:
	}
}

// settle is how long calls must stop starting and ending before the watcher looks.
const settle = 5 * time.Millisecond

// watch reports the program's state while a call is outstanding: soon after calls start or
// end, else every little while (a goroutine that stops computing or blocks makes no call),
// and sends a report when it differs from the last one, or a busy one again after period.
func watch(period time.Duration) {
	// The function every tool call goes through: a goroutine with it on its stack is in a call.
	callFrame := runtime.FuncForPC(reflect.ValueOf(callWith).Pointer()).Name()
	ctx := context.WithValue(context.Background(), watcherKey{}, true)
	every := 20 * time.Millisecond
	var last idleReport
	var sent time.Time
	for {
		if callsStarted.Load() == callsFinished.Load() {
			<-watchKick // nothing outstanding: nothing the controller could hold
			continue
		}
		select {
		case <-watchKick:
			// A call answered from the pass's record ends within milliseconds: look once
			// calls stop starting and ending, not at each (a report each would double them).
			time.Sleep(settle)
			select {
			case <-watchKick:
				continue
			default:
			}
		case <-time.After(every):
		}
		start := time.Now()
		report, ok := sampleIdle(callFrame)
		// Looking stops the world for a moment per goroutine (and waits for running ones to be
		// preempted): a large program is looked at less often, but often enough to be reported
		// busy again within period.
		every = min(max(20*time.Millisecond, 20*time.Since(start)), period/2)
		if !ok || (report == last && (report.Verdict != verdictBusy || time.Since(sent) < period)) {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := call(rctx, controllerServer, idleTool, report)
		cancel()
		if err != nil {
			return // a controller that does not take reports: its grace period decides
		}
		last, sent = report, time.Now()
	}
}

// sampleIdle judges every goroutine (callFrame: see [judgeStacks]); not ok when a call started
// or ended meanwhile (the counts would not describe what was seen).
func sampleIdle(callFrame string) (idleReport, bool) {
	started, finished, ctl := callsStarted.Load(), callsFinished.Load(), controllerCalls.Load()
	verdict := judgeStacks(allStacks(), callFrame)
	if started != callsStarted.Load() || finished != callsFinished.Load() || ctl != controllerCalls.Load() {
		return idleReport{}, false
	}
	if ctl > 0 && verdict == verdictIdle {
		verdict = verdictBusy // the controller answers a searchTools or result() call now
	}
	return idleReport{Verdict: verdict, Started: started, Finished: finished}, true
}

// allStacks is every goroutine's stack as runtime.Stack writes it (nil when over 64 MiB).
func allStacks() []byte {
	for size := 64 << 10; size <= 64<<20; size *= 2 {
		buf := make([]byte, size)
		if n := runtime.Stack(buf, true); n < size {
			return buf[:n]
		}
	}
	return nil
}

// blockedStates are the waits only another goroutine (or a timer's channel, which a stack
// does not show) can end.
var blockedStates = map[string]bool{
	"chan receive": true, "chan send": true, "select": true, "select (no cases)": true,
	"chan receive (nil chan)": true, "chan send (nil chan)": true, "semacquire": true,
	"sync.Mutex.Lock": true, "sync.RWMutex.Lock": true, "sync.RWMutex.RLock": true,
	"sync.Cond.Wait": true, "sync.WaitGroup.Wait": true,
}

// busyStates go on by themselves, soon.
var busyStates = map[string]bool{"running": true, "runnable": true, "preempted": true}

// judgeStacks is the verdict on a runtime.Stack dump of all goroutines: a goroutine with
// callFrame on its stack is in a tool call (the counts speak for it), and one that runs no
// code of the program (main.*) and was not started by it belongs to the runtime (its HTTP
// connections, signal handling, the SDK's readers, this watcher) and waits for those calls.
func judgeStacks(dump []byte, callFrame string) string {
	if dump == nil {
		return verdictUnknown
	}
	verdict := verdictIdle
	for _, block := range strings.Split(strings.TrimSpace(string(dump)), "\n\n") {
		lines := strings.Split(block, "\n")
		state := stackState(lines[0])
		funcs, creator := stackFrames(lines[1:])
		program := strings.HasPrefix(creator, "main.")
		inCall := false
		for _, f := range funcs {
			program = program || strings.HasPrefix(f, "main.")
			inCall = inCall || f == callFrame
		}
		if inCall || !program {
			continue
		}
		switch {
		case busyStates[state] || strings.HasPrefix(state, "GC "):
			return verdictBusy
		case blockedStates[state] && waitsInProgram(funcs):
		default:
			verdict = verdictUnknown
		}
	}
	return verdict
}

// waitsInProgram: the frames above the program's innermost one are the runtime's and sync's
// only (a wait inside, say, net/http or os/exec may end when its I/O does).
func waitsInProgram(funcs []string) bool {
	for _, f := range funcs {
		switch {
		case strings.HasPrefix(f, "main."):
			return true
		case strings.HasPrefix(f, "runtime."), strings.HasPrefix(f, "sync."), strings.HasPrefix(f, "internal/sync."):
		default:
			return false
		}
	}
	return false
}

// stackState reads "goroutine 7 [chan receive, 2 minutes]:" as "chan receive".
func stackState(line string) string {
	if !strings.HasPrefix(line, "goroutine ") {
		return ""
	}
	_, state, _ := strings.Cut(line, "[")
	state, _, _ = strings.Cut(state, "]")
	state, _, _ = strings.Cut(state, ",")
	return state
}

// stackFrames reads a goroutine's stack lines: its functions, innermost first, and the function
// that started it ("created by ...").
func stackFrames(lines []string) (funcs []string, creator string) {
	for _, line := range lines {
		if line == "" || line[0] == '\t' || strings.HasPrefix(line, "...") {
			continue
		}
		if by, ok := strings.CutPrefix(line, "created by "); ok {
			creator, _, _ = strings.Cut(by, " in goroutine ")
			continue
		}
		if i := strings.LastIndexByte(line, '('); i > 0 {
			line = line[:i]
		}
		funcs = append(funcs, line)
	}
	return funcs, creator
}
