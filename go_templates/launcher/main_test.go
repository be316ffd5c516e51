package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The test binary plays both parts: with launcherEnv set it is the launcher (its main), and
// started with confinedArg as its first argument it is the program a launcher confines.
const (
	launcherEnv = "GOCODE_LAUNCHER_TEST_MAIN"
	confinedArg = "gocode-launcher-test-program"
	secretEnv   = "GOCODE_LAUNCHER_TEST_SECRET"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == confinedArg {
		confinedProgram()
		return
	}
	if os.Getenv(launcherEnv) != "" {
		main()
		return
	}
	os.Exit(m.Run())
}

// What a confined program could do, as one JSON line on stdout: each attempt's error ("" when
// it succeeded).
type attempts struct {
	ReadOutside  string `json:"readOutside"`
	WriteScratch string `json:"writeScratch"`
	ExecOther    string `json:"execOther"`
	UnixSocket   string `json:"unixSocket"`
	TCPSocket    string `json:"tcpSocket"`
	Unshare      string `json:"unshare"`
	UID          int    `json:"uid"`
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func confinedProgram() {
	var a attempts
	_, err := os.ReadFile(os.Getenv(secretEnv))
	a.ReadOutside = errText(err)
	a.WriteScratch = errText(os.WriteFile(filepath.Join(os.Args[2], "out-"+strconv.Itoa(os.Getuid())), []byte("ok"), 0o600))
	a.ExecOther = errText(exec.Command("/bin/true").Run())
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	a.UnixSocket = errText(err)
	if err == nil {
		unix.Close(fd)
	}
	fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	a.TCPSocket = errText(err)
	if err == nil {
		unix.Close(fd)
	}
	a.Unshare = errText(unix.Unshare(unix.CLONE_NEWUSER))
	a.UID = os.Getuid()
	_ = json.NewEncoder(os.Stdout).Encode(a)
}

type launched struct {
	code           int
	stdout, stderr string
	status         string // the line written to -status-fd (a Policy, or one with only Error)
}

// launch runs the launcher (this test binary) with args, its -status-fd on descriptor 3.
func launch(t *testing.T, args ...string) launched {
	t.Helper()
	return launchWith(t, nil, nil, args...)
}

// launchWith is launch with more descriptors (4, 5, …), and started called once the launcher
// has started (before it is waited for).
func launchWith(t *testing.T, files []*os.File, started func(), args ...string) launched {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), launcherEnv+"=1")
	cmd.ExtraFiles = append([]*os.File{w}, files...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	for _, f := range files {
		f.Close()
	}
	if started != nil {
		started()
	}
	status := make(chan string, 1)
	go func() {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(r)
		status <- strings.TrimSpace(buf.String())
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the launcher did not finish within 60 s: %s", stderr.String())
	}
	return launched{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String(), <-status}
}

func TestRefusals(t *testing.T) {
	scratch := t.TempDir()
	exe, _ := os.Executable()
	run := []string{"-status-fd", "3", "-scratch", scratch, "-exe", exe, "-port", "9"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no program", []string{"-status-fd", "3", "-scratch", scratch, "-exe", exe, "-port", "9"}, "usage: launcher"},
		{"no scratch", []string{"-status-fd", "3", "-exe", exe, "-port", "9", "--", exe}, "usage: launcher"},
		{"no port", []string{"-status-fd", "3", "-scratch", scratch, "-exe", exe, "--", exe}, "usage: launcher"},
		{"Landlock too old", append(append([]string{"-fake-abi", "2"}, run...), "--", exe), "Landlock ABI 2 is below the required 4"},
		{"a custom minimum", append(append([]string{"-fake-abi", "4", "-min-abi", "6"}, run...), "--", exe), "Landlock ABI 4 is below the required 6"},
		{"no such cgroup", append(append([]string{"-cgroup", filepath.Join(scratch, "missing")}, run...), "--", exe), "joining the run's cgroup"},
		{"a group that is no number", append(append([]string{"-fake-abi", "4", "-group", "staff"}, run...), "--", exe), `-group "staff": not a group id`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := launch(t, tt.args...)
			if got.code != 126 || !strings.Contains(got.stderr, "gocode sandbox: ") || !strings.Contains(got.stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want 126 and %q", got.code, got.stderr, tt.want)
			}
			var p Policy
			if err := json.Unmarshal([]byte(got.status), &p); err != nil || !strings.Contains(p.Error, tt.want) || p.Tier != "" {
				t.Fatalf("status line %q: want only an error containing %q", got.status, tt.want)
			}
		})
	}
}

func TestProbe(t *testing.T) {
	got := launch(t, "-probe", "-fake-abi", "3")
	var p Probe
	if err := json.Unmarshal([]byte(got.stdout), &p); err != nil || got.code != 0 {
		t.Fatalf("probe: exit %d, %q (%v)", got.code, got.stdout, err)
	}
	if p.LandlockABI != 3 || p.Arch != runtime.GOARCH || p.UID != os.Getuid() || p.Kernel == "" {
		t.Fatalf("probe = %+v", p)
	}
	if p.UserNamespace == (p.UserNSError != "") {
		t.Fatalf("probe: userNamespaces %v with error %q", p.UserNamespace, p.UserNSError)
	}
}

func TestListFlag(t *testing.T) {
	var l listFlag
	for _, v := range []string{"/etc/ssl", "/usr/share/zoneinfo"} {
		if err := l.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if l.String() != "/etc/ssl,/usr/share/zoneinfo" || len(l) != 2 {
		t.Fatalf("listFlag = %q", l.String())
	}
}

func TestFsRights(t *testing.T) {
	newer := map[uint64]int{unix.LANDLOCK_ACCESS_FS_REFER: 2, unix.LANDLOCK_ACCESS_FS_TRUNCATE: 3, unix.LANDLOCK_ACCESS_FS_IOCTL_DEV: 5}
	for abi := 1; abi <= 7; abi++ {
		r := fsRights(abi)
		if r&unix.LANDLOCK_ACCESS_FS_EXECUTE == 0 || r&unix.LANDLOCK_ACCESS_FS_WRITE_FILE == 0 || r&unix.LANDLOCK_ACCESS_FS_READ_FILE == 0 {
			t.Errorf("ABI %d: the basic rights are not all handled: %#x", abi, r)
		}
		for right, since := range newer {
			if (r&right != 0) != (abi >= since) {
				t.Errorf("ABI %d: right %#x handled = %v, want %v (it exists from ABI %d)", abi, right, r&right != 0, abi >= since, since)
			}
		}
	}
}

func TestRenumber(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	high := 200
	if err := unix.Dup2(int(f.Fd()), high); err != nil {
		t.Fatal(err)
	}
	low := renumber(high)
	defer unix.Close(low)
	if low >= high || low < 3 {
		t.Fatalf("renumber(%d) = %d, want the lowest free descriptor above stderr", high, low)
	}
	if _, err := unix.FcntlInt(uintptr(high), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
		t.Fatalf("descriptor %d is still open after renumber", high)
	}
	flags, err := unix.FcntlInt(uintptr(low), unix.F_GETFD, 0)
	if err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Fatalf("descriptor %d is not close-on-exec (%v)", low, err)
	}
	if renumber(-1) != -1 {
		t.Fatal("renumber(-1) must stay -1 (no descriptor given)")
	}
}

func TestReadWriteRaw(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pids.max")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeRaw(path, "42\n"); err != nil {
		t.Fatal(err)
	}
	if got, err := readRaw(path); err != nil || got != "42\n" {
		t.Fatalf("readRaw = %q, %v", got, err)
	}
	if _, err := readRaw(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, unix.ENOENT) {
		t.Fatalf("readRaw of a missing file: %v", err)
	}
}

// TestConfinedRun runs a program under the launcher as the controller does, where the host
// has what the default tier needs (Landlock ABI 4 and seccomp); as root it also switches user.
func TestConfinedRun(t *testing.T) {
	if abi := landlockABI(); abi < 4 || !seccompSupported() {
		t.Skipf("this host lacks the default tier (Landlock ABI %d, seccomp %v)", abi, seccompSupported())
	}
	// Directories another user can reach (t.TempDir's parents are private to this user).
	base, err := os.MkdirTemp("", "gocode-launcher-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	scratch, bin := filepath.Join(base, "scratch"), filepath.Join(base, "bin")
	for _, d := range []string{scratch, bin} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(scratch, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	self, _ := os.Executable()
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(bin, "program")
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(base, "secret")
	if err := os.WriteFile(secret, []byte("not for the program"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(secretEnv, secret)

	cases := []struct {
		name string
		args []string
		uid  int
	}{{"as this user", nil, os.Getuid()}}
	if os.Getuid() == 0 {
		cases = append(cases, struct {
			name string
			args []string
			uid  int
		}{"as another user", []string{"-uid", "65534", "-gid", "65534"}, 65534})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"-status-fd", "3", "-scratch", scratch, "-exe", exe, "-port", "9", "-nofile", "64"}, c.args...)
			got := launch(t, append(args, "--", exe, confinedArg, scratch)...)
			if got.code != 0 {
				t.Fatalf("exit %d; stderr %s; status %s", got.code, got.stderr, got.status)
			}
			var p Policy
			if err := json.Unmarshal([]byte(got.status), &p); err != nil {
				t.Fatalf("status line %q: %v", got.status, err)
			}
			if p.Tier != "landlock" || !p.Seccomp || p.Limits["openFiles"] != 64 || p.UID != c.uid || p.Error != "" {
				t.Fatalf("policy = %+v", p)
			}
			var a attempts
			if err := json.Unmarshal([]byte(got.stdout), &a); err != nil {
				t.Fatalf("program output %q: %v (stderr %s)", got.stdout, err, got.stderr)
			}
			want := []struct {
				what, err, contains string
			}{
				{"reading a file outside its directories", a.ReadOutside, "permission denied"},
				{"writing in its scratch directory", a.WriteScratch, ""},
				{"running another program", a.ExecOther, "permission denied"},
				{"a UNIX socket", a.UnixSocket, "operation not permitted"},
				{"a TCP socket", a.TCPSocket, ""},
				{"a new namespace", a.Unshare, "operation not permitted"},
			}
			for _, w := range want {
				if (w.contains == "") != (w.err == "") || !strings.Contains(w.err, w.contains) {
					t.Errorf("%s: error %q, want %q", w.what, w.err, w.contains)
				}
			}
			if a.UID != c.uid {
				t.Errorf("the program ran as uid %d, want %d", a.UID, c.uid)
			}
		})
	}
}

// run evaluates a classic BPF seccomp program on one system call, as the kernel does, and
// returns the action.
func run(t *testing.T, prog []unix.SockFilter, arch, nr uint32, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64) // struct seccomp_data: nr, arch, instruction pointer, args[6]
	put32 := func(off int, v uint32) {
		data[off], data[off+1], data[off+2], data[off+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	put32(0, nr)
	put32(4, arch)
	for i, a := range args {
		put32(16+8*i, uint32(a))
		put32(20+8*i, uint32(a>>32))
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		ins := prog[pc]
		switch ins.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			off := int(ins.K)
			acc = uint32(data[off]) | uint32(data[off+1])<<8 | uint32(data[off+2])<<16 | uint32(data[off+3])<<24
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= ins.K
		case unix.BPF_RET | unix.BPF_K:
			return ins.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var taken bool
			switch ins.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				taken = acc == ins.K
			case unix.BPF_JGE:
				taken = acc >= ins.K
			default:
				taken = acc&ins.K != 0
			}
			if taken {
				pc += int(ins.Jt)
			} else {
				pc += int(ins.Jf)
			}
		default:
			t.Fatalf("instruction %d: opcode %#x is not one the filter should use", pc, ins.Code)
		}
	}
	t.Fatal("the filter ran off its end")
	return 0
}

func TestSeccompFilter(t *testing.T) {
	pid := 4242
	prog := filter(pid)
	if len(prog) > 4096 {
		t.Fatalf("%d instructions: over the kernel's limit", len(prog))
	}
	const other = 77
	tests := []struct {
		name string
		nr   uintptr
		args []uint64
		want uint32
	}{
		{"read", unix.SYS_READ, nil, retAllow},
		{"ptrace", unix.SYS_PTRACE, nil, retEPERM},
		{"memfd_create", unix.SYS_MEMFD_CREATE, nil, retEPERM},
		{"listen", unix.SYS_LISTEN, nil, retEPERM},
		{"setsid", unix.SYS_SETSID, nil, retEPERM},
		{"clone3 falls back", unix.SYS_CLONE3, nil, retNOSYS},
		{"clone of a thread", unix.SYS_CLONE, cloneArgs(unix.CLONE_THREAD | unix.CLONE_VM), retAllow},
		{"clone of a process", unix.SYS_CLONE, cloneArgs(uint64(unix.SIGCHLD)), retEPERM},
		{"clone into a namespace", unix.SYS_CLONE, cloneArgs(unix.CLONE_THREAD | unix.CLONE_NEWUSER), retEPERM},
		{"TCP over IPv4", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM | unix.SOCK_CLOEXEC, 0}, retAllow},
		{"TCP over IPv6 by protocol", unix.SYS_SOCKET, []uint64{unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_TCP}, retAllow},
		{"MPTCP", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP}, retEPERM},
		{"UDP", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_DGRAM, 0}, retEPERM},
		{"a UNIX socket", unix.SYS_SOCKET, []uint64{unix.AF_UNIX, unix.SOCK_STREAM, 0}, retEPERM},
		{"netlink", unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_RAW, 0}, retEPERM},
		{"a signal to itself", unix.SYS_KILL, []uint64{uint64(pid), 9}, retAllow},
		{"a signal to another process", unix.SYS_KILL, []uint64{other, 9}, retEPERM},
		{"a signal to its group", unix.SYS_KILL, []uint64{0, 9}, retEPERM},
		{"its own limits", unix.SYS_PRLIMIT64, []uint64{0}, retAllow},
		{"another's limits", unix.SYS_PRLIMIT64, []uint64{other}, retEPERM},
		{"faking terminal input", unix.SYS_IOCTL, []uint64{0, unix.TIOCSTI}, retEPERM},
		{"an ordinary ioctl", unix.SYS_IOCTL, []uint64{0, unix.TCGETS}, retAllow},
		{"a SIGIO owner", unix.SYS_FCNTL, []uint64{3, unix.F_SETOWN}, retEPERM},
		{"an ordinary fcntl", unix.SYS_FCNTL, []uint64{3, unix.F_GETFL}, retAllow},
		{"TCP Fast Open by sendto", unix.SYS_SENDTO, []uint64{3, 0, 0, unix.MSG_FASTOPEN}, retEPERM},
		{"an ordinary sendto", unix.SYS_SENDTO, []uint64{3, 0, 0, 0}, retAllow},
		{"TCP Fast Open by option", unix.SYS_SETSOCKOPT, []uint64{3, unix.IPPROTO_TCP, unix.TCP_FASTOPEN_CONNECT}, retEPERM},
		{"TCP_NODELAY", unix.SYS_SETSOCKOPT, []uint64{3, unix.IPPROTO_TCP, unix.TCP_NODELAY}, retAllow},
		{"dropping the parent-death signal", unix.SYS_PRCTL, []uint64{unix.PR_SET_PDEATHSIG, 0}, retEPERM},
		{"naming a thread", unix.SYS_PRCTL, []uint64{unix.PR_SET_NAME}, retAllow},
	}
	for _, tt := range tests {
		if got := run(t, prog, auditArch, uint32(tt.nr), tt.args...); got != tt.want {
			t.Errorf("%s: action %#x, want %#x", tt.name, got, tt.want)
		}
	}
	for _, sys := range denied() {
		if got := run(t, prog, auditArch, uint32(sys)); got != retEPERM {
			t.Errorf("denied system call %d: action %#x, want EPERM", sys, got)
		}
	}
	if got := run(t, prog, auditArch^1, unix.SYS_READ); got != retKill {
		t.Errorf("another architecture's call: action %#x, want the process killed", got)
	}
}

func cloneArgs(flags uint64) []uint64 {
	args := make([]uint64, cloneFlagsArg+1)
	args[cloneFlagsArg] = flags
	return args
}

// TestGoAhead: with -go-fd the launcher sets up, then waits; the program need not exist until
// the go-ahead, and without one (EOF) nothing is run and no status line is written.
func TestGoAhead(t *testing.T) {
	if abi := landlockABI(); abi < 4 || !seccompSupported() {
		t.Skipf("this host lacks the default tier (Landlock ABI %d, seccomp %v)", abi, seccompSupported())
	}
	base, err := os.MkdirTemp("", "gocode-launcher-go-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	scratch := filepath.Join(base, "scratch")
	if err := os.Mkdir(scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(base, "secret")
	if err := os.WriteFile(secret, []byte("not for the program"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(secretEnv, secret)

	run := func(t *testing.T, exe string, ahead func(w *os.File)) launched {
		t.Helper()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		return launchWith(t, []*os.File{r}, func() { ahead(w) }, "-status-fd", "3", "-go-fd", "4", "-scratch", scratch,
			"-exe", exe, "-port", "9", "--", exe, confinedArg, scratch)
	}

	t.Run("go", func(t *testing.T) {
		exe := filepath.Join(base, "later")
		got := run(t, exe, func(w *os.File) {
			// Put in place only now, as the controller does once the program is linked.
			if err := os.WriteFile(exe, data, 0o755); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte("g")); err != nil {
				t.Fatal(err)
			}
			w.Close()
		})
		if got.code != 0 {
			t.Fatalf("exit %d; stderr %s; status %s", got.code, got.stderr, got.status)
		}
		var a attempts
		if err := json.Unmarshal([]byte(strings.TrimSpace(got.stdout)), &a); err != nil {
			t.Fatalf("program output %q: %v", got.stdout, err)
		}
		if a.ReadOutside == "" || a.ExecOther == "" {
			t.Fatalf("the program ran unconfined: %+v", a)
		}
		var p Policy
		if err := json.Unmarshal([]byte(got.status), &p); err != nil || p.Tier == "" {
			t.Fatalf("status line %q: %v", got.status, err)
		}
	})
	t.Run("eof", func(t *testing.T) {
		exe := filepath.Join(base, "never")
		if err := os.WriteFile(exe, data, 0o755); err != nil {
			t.Fatal(err)
		}
		got := run(t, exe, func(w *os.File) { w.Close() })
		if got.code != 125 || got.stdout != "" || got.status != "" {
			t.Fatalf("want exit 125, no output, no status; got exit %d, stdout %q, status %q, stderr %s",
				got.code, got.stdout, got.status, got.stderr)
		}
	})
}
