//go:build !gocode_loopback

package rt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// noiseWarnings is how many non-JSON lines per server are reported on stderr; later ones are
// only skipped.
const noiseWarnings = 3

// A commandTransport is an [mcp.Transport] to a server started as a command, like
// [mcp.CommandTransport], except that lines on the server's stdout that are not JSON (banners,
// log lines, errors some servers print there) are skipped with a warning instead of ending
// the session. Close stops the server as CommandTransport does: stdin closed, then SIGTERM,
// then SIGKILL, waiting terminate between steps.
type commandTransport struct {
	server    string
	cmd       *exec.Cmd
	terminate time.Duration
	proc      *process // set by Connect
}

func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting server: %w", err)
	}
	proc := &process{cmd: t.cmd, stdin: stdin, terminate: t.terminate, exited: make(chan struct{})}
	go func() {
		proc.waitErr = t.cmd.Wait()
		close(proc.exited)
	}()
	t.proc = proc
	reader := &jsonLines{server: t.server, r: bufio.NewReader(stdout), closer: stdout}
	return (&mcp.IOTransport{Reader: reader, Writer: proc}).Connect(ctx)
}

// jsonLines passes on the lines of r that are JSON objects or arrays (batches) and drops the others.
type jsonLines struct {
	server  string
	r       *bufio.Reader
	closer  io.Closer
	pending []byte
	skipped int
}

func (j *jsonLines) Read(p []byte) (int, error) {
	for len(j.pending) == 0 {
		line, err := j.r.ReadBytes('\n')
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			if (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
				noteRead(trimmed)
				j.pending = append(trimmed, '\n')
			} else {
				j.skip(trimmed)
			}
		}
		if err != nil && len(j.pending) == 0 {
			return 0, err
		}
		if err != nil {
			break // deliver the last line; the error comes with the next Read
		}
	}
	n := copy(p, j.pending)
	j.pending = j.pending[n:]
	return n, nil
}

func (j *jsonLines) skip(line []byte) {
	j.skipped++
	if j.skipped > noiseWarnings {
		return
	}
	more := ""
	if j.skipped == noiseWarnings {
		more = "; further ones are skipped silently"
	}
	fmt.Fprintf(os.Stderr, "gocode: MCP server %q printed a line on stdout that is not JSON-RPC (skipped%s): %q\n", j.server, more, clip(string(line)))
}

func (j *jsonLines) Close() error { return j.closer.Close() }

// ended says how the server process ended ("the server exited with status 7"), waiting up to
// wait for it; "" if it is still running or was never started.
func (t *commandTransport) ended(wait time.Duration) string {
	if t == nil || t.proc == nil {
		return ""
	}
	select {
	case <-t.proc.exited:
	case <-time.After(wait):
		return ""
	}
	state := t.cmd.ProcessState
	if state == nil {
		return ""
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("the server was killed by signal %d", ws.Signal())
	}
	return fmt.Sprintf("the server exited with status %d", state.ExitCode())
}

// process is the server's stdin; closing it stops the server.
type process struct {
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	terminate time.Duration
	exited    chan struct{} // closed when Wait returned (waitErr set)
	waitErr   error
	once      sync.Once
	err       error
}

func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

func (p *process) Close() error {
	p.once.Do(func() {
		_ = p.stdin.Close()
		for _, sig := range []os.Signal{nil, syscall.SIGTERM, syscall.SIGKILL} {
			if sig != nil {
				_ = p.cmd.Process.Signal(sig)
			}
			select {
			case <-p.exited:
				err := p.waitErr
				var exit *exec.ExitError
				if sig != nil && errors.As(err, &exit) {
					err = nil // a server that needed a signal to stop is not a failure of the program
				}
				p.err = err
				return
			case <-time.After(p.terminate):
			}
		}
		p.err = errors.New("unresponsive server process")
	})
	return p.err
}
