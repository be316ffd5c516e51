package rt

import (
	"strings"
	"testing"
)

const testCallFrame = "gocodews/rt.callWith"

// Goroutines as runtime.Stack writes them (from real programs, arguments shortened).
const (
	inCall = `goroutine 1 [select]:
net/http.(*persistConn).roundTrip(0x782d2274780, 0x782d21b28c0)
	net/http/transport.go:2911 +0x83d
github.com/modelcontextprotocol/go-sdk/mcp.(*ClientSession).CallTool(0x782d21b40c0, {0x8bf5b8, 0x782d2202fc0}, 0x7?)
	github.com/modelcontextprotocol/go-sdk@v1.8.0/mcp/client.go:1298 +0x205
gocodews/rt.callWith({0x8bf5b8, 0x782d2202fc0}, {0x88ffbd, 0x7}, {0x8910d0, 0xa}, {0x817540, 0x782d2140080}, 0x0)
	gocodews/rt/rt.go:261 +0x207
gocodews/rt.CallJSON[...]({0x8bf5b8, 0x782d2202fc0}, {0x88ffbd, 0x7}, {0x8910d0, 0xa}, {0x817540, 0x782d2140080})
	gocodews/rt/rt.go:281 +0xc5
gocodews/tools/tcfb4c60f925f6b39.WebSearch({0x8bf5b8, 0x782d2202fc0}, {{0x8b5cd0?, 0x8255a0?}})
	gocodews/tools/tcfb4c60f925f6b39/tools.go:38 +0x65
main.Run({0x8bf5b8, 0x782d2202fc0})
	model.go:14 +0xd4
gocodews/rt.Main(0x8b2ef0)
	gocodews/rt/rt.go:475 +0xa3
main.main()
	gocode_main.go:6 +0x1a`
	readLoop = `goroutine 13 [IO wait]:
internal/poll.runtime_pollWait(0x7f93a2c12200, 0x72)
	runtime/netpoll.go:351 +0x85
net/http.(*persistConn).readLoop(0x782d219bb80)
	net/http/transport.go:2330 +0x172
created by net/http.(*Transport).dialConn in goroutine 12
	net/http/transport.go:1994 +0x16ac`
	signals = `goroutine 21 [syscall]:
os/signal.signal_recv()
	runtime/sigqueue.go:152 +0x98
os/signal.loop()
	os/signal/signal_unix.go:23 +0x13
created by os/signal.Notify.func1.1 in goroutine 1
	os/signal/signal.go:152 +0x1f`
	waitGroup = `goroutine 1 [sync.WaitGroup.Wait]:
sync.runtime_SemacquireWaitGroup(0xc000012345?, 0x0?)
	runtime/sema.go:114 +0x2e
sync.(*WaitGroup).Wait(0xc000012340)
	sync/waitgroup.go:206 +0x85
main.Run({0x8bf5b8, 0x782d2202fc0})
	model.go:9 +0x1d4
gocodews/rt.Main(0x8b2ef0)
	gocodews/rt/rt.go:475 +0xa3
main.main()
	gocode_main.go:6 +0x1a`
	mutex = `goroutine 22 [sync.Mutex.Lock]:
internal/sync.runtime_SemacquireMutex(0x0?, 0x0?, 0x0?)
	runtime/sema.go:95 +0x25
internal/sync.(*Mutex).Lock(...)
	internal/sync/mutex.go:70
sync.(*Mutex).Lock(...)
	sync/mutex.go:46
main.Run.func4()
	model.go:21 +0x2d
created by main.Run in goroutine 1
	model.go:21 +0x165`
	receive = `goroutine 19 [chan receive, 2 minutes]:
main.Run.func1()
	model.go:17 +0x49
created by main.Run in goroutine 1
	model.go:17 +0xb3`
	running = `goroutine 23 [running]:
main.Run.func5()
	model.go:3 +0x1
created by main.Run in goroutine 1
	model.go:22 +0x171`
	runnable = `goroutine 24 [runnable]:
main.Run.func5()
	model.go:3 +0x1
created by main.Run in goroutine 1
	model.go:22 +0x171`
	sleeping = `goroutine 20 [sleep]:
time.Sleep(0x34630b8a000)
	runtime/time.go:363 +0x165
main.Run.func2()
	model.go:18 +0x1d
created by main.Run in goroutine 1
	model.go:18 +0xbf`
	inLibrary = `goroutine 25 [select]:
net/http.(*persistConn).roundTrip(0x782d2274780, 0x782d21b28c0)
	net/http/transport.go:2911 +0x83d
net/http.(*Client).Do(...)
	net/http/client.go:592
main.Run.func6()
	model.go:30 +0x40
created by main.Run in goroutine 1
	model.go:29 +0x1a`
	startedLibrary = `goroutine 26 [IO wait]:
internal/poll.runtime_pollWait(0x7f93a2c12200, 0x72)
	runtime/netpoll.go:351 +0x85
io.Copy(...)
	io/io.go:388
created by main.Run in goroutine 1
	model.go:24 +0x285`
	watcher = `goroutine 9 [running]:
runtime.Stack({0xc000100000, 0x10000, 0x10000}, 0x1)
	runtime/mprof.go:1413 +0x45
gocodews/rt.allStacks()
	gocodews/rt/idle.go:141 +0x45
created by gocodews/rt.trackCall.func3 in goroutine 1
	gocodews/rt/idle.go:75 +0x1d`
)

func TestJudgeStacks(t *testing.T) {
	dump := func(goroutines ...string) []byte { return []byte(strings.Join(goroutines, "\n\n") + "\n") }
	for _, c := range []struct {
		name string
		dump []byte
		want string
	}{
		{"every goroutine of the program in a call, the runtime's waiting", dump(inCall, readLoop, signals, watcher), verdictIdle},
		{"waiting on a WaitGroup, a mutex, a channel", dump(waitGroup, mutex, receive, readLoop), verdictIdle},
		{"one computing", dump(inCall, running, watcher), verdictBusy},
		{"one about to run", dump(inCall, runnable), verdictBusy},
		{"busy wins over unknown", dump(sleeping, running), verdictBusy},
		{"one sleeping", dump(inCall, sleeping), verdictUnknown},
		{"one waiting inside a library call", dump(waitGroup, inLibrary), verdictUnknown},
		{"one it started doing I/O", dump(inCall, startedLibrary), verdictUnknown},
		{"too many to look at", nil, verdictUnknown},
	} {
		if got := judgeStacks(c.dump, testCallFrame); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestStackState(t *testing.T) {
	for line, want := range map[string]string{
		"goroutine 7 [chan receive]:":                            "chan receive",
		"goroutine 12 [select, 3 minutes, locked to thread]:":    "select",
		"goroutine 1 gp=0xc000002380 m=0 mp=0x6b7f20 [running]:": "running",
		"created by main.Run in goroutine 1":                     "",
	} {
		if got := stackState(line); got != want {
			t.Errorf("%q: got %q, want %q", line, got, want)
		}
	}
}
