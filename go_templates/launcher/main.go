// Command launcher confines itself, then execs a model's program, so the program is confined
// before its first instruction (package initialisers and init() included).
//
// It is gocode's trusted sandbox step, built from this source with CGO_ENABLED=0. In order:
// new session and parent-death signal, rlimits, every inherited descriptor above stderr
// closed (except the status pipe, close-on-exec), capabilities dropped, no_new_privs,
// Landlock (chosen for the kernel's ABI, never best-effort: too old an ABI is an error), a
// seccomp filter for what Landlock misses, then execve. The effective policy, or the error
// that stopped it, is written as one JSON line on the status descriptor; a successful exec
// closes it. See docs/sandbox.md for what each layer guarantees and why.
//
//	launcher -probe
//	launcher -status-fd 3 -scratch DIR -exe PROG -port P [-ro PATH]... [-rw DIR]... [-shrink DIR]... [limits] -- PROG ARGS...
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// Policy is what the program runs under, reported to the controller.
type Policy struct {
	Tier        string            `json:"tier"`
	LandlockABI int               `json:"landlockAbi"`
	Network     string            `json:"network"`
	Files       map[string]any    `json:"files"`
	Limits      map[string]uint64 `json:"limits"`
	Seccomp     bool              `json:"seccomp"`
	UID         int               `json:"uid"`
	Groups      []int             `json:"groups,omitempty"`
	Error       string            `json:"error,omitempty"`
}

var (
	status     *os.File
	statusFD   *int
	listenSock *int
	goFD       *int
)

func fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if status != nil {
		_ = json.NewEncoder(status).Encode(Policy{Error: msg})
	}
	fmt.Fprintln(os.Stderr, "gocode sandbox: "+msg)
	os.Exit(126)
}

func main() {
	runtime.LockOSThread() // Landlock before ABI 8 binds the calling thread; exec from that thread

	probe := flag.Bool("probe", false, "print what this host supports as JSON and exit")
	statusFD = flag.Int("status-fd", -1, "descriptor for the policy (or error) line")
	listenSock = flag.Int("listen-sock", -1, "netns: a UNIX socket to send the listening socket over")
	goFD = flag.Int("go-fd", -1, "set up the sandbox, then wait for one byte 'g' here before confining and starting the program (EOF: exit)")
	netns := flag.Bool("netns", false, "a private user+network namespace whose only endpoint is the controller")
	scratch := flag.String("scratch", "", "the only directory the program may read and write")
	exe := flag.String("exe", "", "the program (the only file it may execute)")
	port := flag.Uint64("port", 0, "the only TCP port the program may connect to")
	minABI := flag.Int("min-abi", 4, "refuse to run below this Landlock ABI")
	fakeABI := flag.Int("fake-abi", -1, "report this Landlock ABI instead of the kernel's (tests of unsupported hosts)")
	cpu := flag.Uint64("cpu", 60, "RLIMIT_CPU seconds")
	data := flag.Uint64("data", 512<<20, "RLIMIT_DATA bytes (the heap)")
	as := flag.Uint64("as", (512+4096)<<20, "RLIMIT_AS bytes (address space ceiling)")
	fsize := flag.Uint64("fsize", 64<<20, "RLIMIT_FSIZE bytes")
	nofile := flag.Uint64("nofile", 256, "RLIMIT_NOFILE")
	nproc := flag.Uint64("nproc", 0, "RLIMIT_NPROC (threads of the program's user); 0: unchanged")
	cgroup := flag.String("cgroup", "", "join this cgroup first (its pids.max caps the run's processes and threads)")
	uid := flag.Int("uid", -1, "run the program as this user (from root)")
	gid := flag.Int("gid", -1, "… and this group")
	umask := flag.Int("umask", 0o077, "the program's umask (0o007 where a group shares its workspace)")
	var ro, rw, shrink, groups listFlag
	flag.Var(&groups, "group", "a supplementary group of the program's user (repeatable; with -uid): its workspace's")
	flag.Var(&ro, "ro", "a path the program may read (repeatable)")
	flag.Var(&rw, "rw", "a directory the program may read and write, as scratch (repeatable): its workspace")
	flag.Var(&shrink, "shrink", "a directory the program may read and delete from but not write (repeatable): its workspace over its cap")
	flag.Parse()

	if *probe {
		_ = json.NewEncoder(os.Stdout).Encode(probeHost(*fakeABI))
		return
	}
	// Before any limit: the descriptors arrive numbered as they were in the controller, which
	// grows with every server session it holds, and RLIMIT_NOFILE below may be smaller than
	// that number (Go's fork then cannot place its own pipe above them: EBADF).
	*statusFD = renumber(*statusFD)
	*listenSock = renumber(*listenSock)
	*goFD = renumber(*goFD)
	if *statusFD >= 0 {
		status = os.NewFile(uintptr(*statusFD), "status")
	}
	if *cgroup != "" && os.Getenv(innerEnv) == "" { // the inner netns launcher is in it already
		// Before the user switch: the controller's user owns the cgroup.
		procs := filepath.Join(*cgroup, "cgroup.procs")
		if err := writeRaw(procs, fmt.Sprintf("%d\n", os.Getpid())); err != nil {
			fail("joining the run's cgroup: %v", err)
		}
	}
	argv := flag.Args()
	if len(argv) == 0 || *scratch == "" || *exe == "" || *port == 0 {
		fail("usage: launcher -status-fd N -scratch DIR -exe PROG -port P -- PROG ARGS...")
	}

	abi := landlockABI()
	if *fakeABI >= 0 {
		abi = *fakeABI
	}
	if abi < *minABI {
		fail("Landlock ABI %d is below the required %d (Linux 6.7 or newer with landlock in lsm=); refusing to run unconfined", abi, *minABI)
	}

	inner := os.Getenv(innerEnv) != ""
	if !inner {
		// The controller starts it as a session leader already; the inner launcher of the
		// netns tier must stay in that session's group, which the controller kills whole.
		if _, err := unix.Setsid(); err != nil && !errors.Is(err, unix.EPERM) {
			fail("setsid: %v", err)
		}
	}
	unix.Umask(*umask & 0o777)

	limits := map[string]uint64{"cpuSeconds": *cpu, "dataBytes": *data, "addressSpaceBytes": *as, "fileSizeBytes": *fsize, "openFiles": *nofile}
	if *cgroup != "" {
		if text, err := readRaw(filepath.Join(*cgroup, "pids.max")); err == nil {
			var n uint64
			if _, err := fmt.Sscan(text, &n); err == nil {
				limits["tasks"] = n
			}
		}
	}
	rlimits := map[int]uint64{unix.RLIMIT_CPU: *cpu, unix.RLIMIT_DATA: *data, unix.RLIMIT_AS: *as, unix.RLIMIT_FSIZE: *fsize, unix.RLIMIT_NOFILE: *nofile, unix.RLIMIT_CORE: 0}
	if *nproc > 0 {
		rlimits[unix.RLIMIT_NPROC] = *nproc
		limits["threads"] = *nproc
	}
	for res, v := range rlimits {
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			fail("setrlimit %d=%d: %v", res, v, err)
		}
	}

	gids := make([]int, 0, len(groups))
	for _, g := range groups {
		var n int
		if _, err := fmt.Sscan(g, &n); err != nil || n < 0 {
			fail("-group %q: not a group id", g)
		}
		gids = append(gids, n)
	}
	if *uid >= 0 && !inner { // the inner netns launcher already runs as that user
		// The stdlib calls change every thread's credentials, not just this one's.
		// No group of the controller's; only the workspace's group, which every run of one
		// model shares (the workspace is that group's, setgid), so runs as different users
		// of one model can use each other's files and no other model's run can.
		if err := syscall.Setgroups(gids); err != nil {
			fail("setgroups %v: %v", gids, err)
		}
		if err := syscall.Setresgid(*gid, *gid, *gid); err != nil {
			fail("setresgid %d: %v", *gid, err)
		}
		if err := syscall.Setresuid(*uid, *uid, *uid); err != nil {
			fail("setresuid %d: %v", *uid, err)
		}
		// A user switch makes the process non-dumpable, which puts its /proc files (and its
		// children's uid_map, for the netns tier) out of its own reach; the program's exec
		// sets this again from its binary anyway.
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); err != nil {
			fail("PR_SET_DUMPABLE: %v", err)
		}
	}
	// After any credential change, which clears it.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		fail("PR_SET_PDEATHSIG: %v", err)
	}
	if *netns && !inner {
		enterNetns() // does not return: the inner launcher goes on from here
	}
	if *netns {
		if *listenSock < 0 {
			fail("-netns needs -listen-sock")
		}
		if err := openEndpoint(int(*port), *listenSock); err != nil {
			fail("network namespace: %v", err)
		}
	}
	if *goFD >= 0 {
		// Started while the program was still being linked: everything that costs time (the
		// cgroup join, the namespaces) is done; what is left needs the program's file to exist
		// (Landlock opens it), which the controller puts in place before it says go.
		awaitGo(*goFD)
	}
	closeInherited(*statusFD)
	dropCapabilities()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail("PR_SET_NO_NEW_PRIVS: %v", err)
	}

	exePath, err := filepath.Abs(*exe)
	if err != nil {
		fail("%v", err)
	}
	// Below ABI 4 (only when -min-abi allows it: best-effort) Landlock has no network rules,
	// and without Landlock only seccomp and the limits remain; the policy says which.
	tier, network := "landlock", fmt.Sprintf("TCP connect to port %d only (any address); no UDP, UNIX, MPTCP, raw or other sockets; no listening", *port)
	if abi > 0 {
		if err := restrict(abi, append([]string{*scratch}, rw...), shrink, exePath, ro, *port); err != nil {
			fail("landlock: %v", err)
		}
	}
	if abi < 4 {
		tier, network = "landlock-fs", "TCP to any address and port (no Landlock network rules below ABI 4); no UDP, UNIX, MPTCP, raw or other sockets"
	}
	if abi == 0 {
		tier = "seccomp-only"
	}
	if *netns {
		tier, network = "netns", fmt.Sprintf("one endpoint: 127.0.0.1:%d, the controller, in a private network namespace (nothing else on the host or beyond)", *port)
	}
	if err := installSeccomp(os.Getpid()); err != nil {
		fail("seccomp: %v", err)
	}

	policy := Policy{
		Tier:        tier,
		LandlockABI: abi,
		Network:     network,
		Files:       map[string]any{"readWrite": append([]string{*scratch}, rw...), "readDelete": []string(shrink), "execute": []string{exePath}, "readOnly": []string(ro)},
		Limits:      limits,
		Seccomp:     true,
		UID:         os.Getuid(),
	}
	if *uid >= 0 {
		policy.Groups = gids // as the host sees them (inside the netns tier's namespace they show as nobody's)
	}
	if abi == 0 {
		policy.Files = map[string]any{"unrestricted": "no Landlock: the user's own file permissions apply"}
	}
	if status != nil {
		_ = json.NewEncoder(status).Encode(policy)
	}
	err = unix.Exec(exePath, argv, os.Environ())
	fail("exec %s: %v", exePath, err)
}

// awaitGo waits for the controller's go-ahead: one byte 'g'. Anything else (EOF: the run was
// refused or cancelled while the program was linked) ends the launcher without a status line.
func awaitGo(fd int) {
	buf := make([]byte, 1)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if n != 1 || buf[0] != 'g' {
			os.Exit(125)
		}
		break
	}
	unix.Close(fd)
}

// writeRaw and readRaw use plain system calls: os.File would start the runtime's network
// poller, whose descriptor closeInherited then closes under it (a crash in sysmon).
func writeRaw(path, text string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.Write(fd, []byte(text))
	return err
}

func readRaw(path string) (string, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	buf := make([]byte, 64)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// renumber moves an inherited descriptor to the lowest free number (close-on-exec), so what
// the launcher holds never depends on how many descriptors the controller had open.
func renumber(fd int) int {
	if fd < 0 {
		return fd
	}
	low, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gocode sandbox: descriptor %d: %v\n", fd, err)
		os.Exit(126)
	}
	if low < fd {
		unix.Close(fd)
		return low
	}
	unix.Close(low) // already the lowest free number
	unix.CloseOnExec(fd)
	return fd
}

// closeInherited closes every descriptor above stderr except keep: Landlock checks opens,
// not descriptors the program already holds.
func closeInherited(keep int) {
	ranges := [][2]uint{{3, ^uint(0)}}
	if keep >= 3 {
		ranges = [][2]uint{{3, uint(keep) - 1}, {uint(keep) + 1, ^uint(0)}}
	}
	for _, r := range ranges {
		if r[0] > r[1] {
			continue
		}
		if _, _, e := unix.Syscall(unix.SYS_CLOSE_RANGE, uintptr(r[0]), uintptr(r[1]), 0); e != 0 {
			fail("close_range: %v", e)
		}
	}
}

// dropCapabilities empties the bounding, ambient, effective, permitted and inheritable sets
// (it matters when gocode runs as root, as in CI containers).
func dropCapabilities() {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		_ = unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		fail("capset: %v", err)
	}
}

// --- Landlock ---------------------------------------------------------------------------------

type pathBeneath struct {
	Access   uint64
	ParentFD int32
}

type netPort struct {
	Access uint64
	Port   uint64
}

const (
	ruleTypePath = 1
	ruleTypeNet  = 2
)

func landlockABI() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(v)
}

// fsRights are the filesystem rights a ruleset handles at an ABI: everything the ABI knows,
// so anything not granted below is denied.
func fsRights(abi int) uint64 {
	r := uint64(unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM)
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return r
}

// restrict confines the process to read and write beneath writable (scratch, then the
// workspace), read and delete (never create or write) beneath shrinkable (a workspace over its
// cap), execute exe, read ro, and (ABI 4+) connect to port. Landlock checks the resolved
// path of every access, so ".." and symlinks leading out of these directories reach nothing.
func restrict(abi int, writable, shrinkable []string, exe string, ro []string, port uint64) error {
	handled := fsRights(abi)
	attr := unix.LandlockRulesetAttr{Access_fs: handled}
	size := unsafe.Sizeof(attr.Access_fs)
	if abi >= 4 {
		attr.Access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		size = unsafe.Offsetof(attr.Scoped)
	}
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
		size = unsafe.Sizeof(attr)
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return fmt.Errorf("create ruleset (ABI %d): %v", abi, e)
	}
	defer unix.Close(int(fd))

	// No EXECUTE, no devices, sockets or FIFOs in scratch.
	scratchRights := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE|unix.LANDLOCK_ACCESS_FS_READ_DIR|unix.LANDLOCK_ACCESS_FS_WRITE_FILE|
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR|unix.LANDLOCK_ACCESS_FS_REMOVE_FILE|unix.LANDLOCK_ACCESS_FS_MAKE_DIR|
		unix.LANDLOCK_ACCESS_FS_MAKE_REG|unix.LANDLOCK_ACCESS_FS_MAKE_SYM) | (handled & (unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE))
	for _, dir := range writable {
		if err := addPath(int(fd), dir, scratchRights); err != nil {
			return err
		}
	}
	// Over its cap a workspace may only shrink: no file or directory made, none opened to write.
	shrinkRights := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE)
	for _, dir := range shrinkable {
		if err := addPath(int(fd), dir, shrinkRights); err != nil {
			return err
		}
	}
	if err := addPath(int(fd), exe, unix.LANDLOCK_ACCESS_FS_EXECUTE|unix.LANDLOCK_ACCESS_FS_READ_FILE); err != nil {
		return err
	}
	for _, p := range ro {
		rights := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			rights |= unix.LANDLOCK_ACCESS_FS_READ_DIR // directory rights on a file are EINVAL
		} else if err != nil {
			continue // an optional path this host lacks
		}
		if err := addPath(int(fd), p, rights); err != nil {
			return err
		}
	}
	if abi >= 4 {
		rule := netPort{Access: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, Port: port}
		if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, ruleTypeNet, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
			return fmt.Errorf("port rule %d: %v", port, e)
		}
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return fmt.Errorf("restrict self: %v", e)
	}
	return nil
}

func addPath(ruleset int, path string, rights uint64) error {
	f, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err == unix.EACCES {
		// The program's own user may not search the directories above its workspace (a private
		// home): it starts in the workspace, which it reaches as ".".
		if wd, werr := os.Getwd(); werr == nil && wd == filepath.Clean(path) {
			f, err = unix.Open(".", unix.O_PATH|unix.O_CLOEXEC, 0)
		}
	}
	if err != nil {
		return fmt.Errorf("open %s: %v", path, err)
	}
	defer unix.Close(f)
	rule := pathBeneath{Access: rights, ParentFD: int32(f)}
	// The kernel's struct is packed (12 bytes); Go pads it to 16, which the kernel never reads.
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), ruleTypePath, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
		return fmt.Errorf("rule for %s: %v", path, e)
	}
	return nil
}

// --- probe ------------------------------------------------------------------------------------

type Probe struct {
	LandlockABI   int    `json:"landlockAbi"`
	Seccomp       bool   `json:"seccomp"`
	UserNamespace bool   `json:"userNamespaces"`
	UserNSError   string `json:"userNamespacesError,omitempty"`
	UID           int    `json:"uid"`
	Kernel        string `json:"kernel"`
	Arch          string `json:"arch"`
}

func probeHost(fakeABI int) Probe {
	var u unix.Utsname
	_ = unix.Uname(&u)
	p := Probe{LandlockABI: landlockABI(), UID: os.Getuid(), Kernel: unix.ByteSliceToString(u.Release[:]), Arch: runtime.GOARCH}
	if fakeABI >= 0 {
		p.LandlockABI = fakeABI
	}
	// seccomp: the filter mode is available when asking for the current mode works.
	if v, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err == nil && v >= 0 {
		p.Seccomp = seccompSupported()
	}
	// Unprivileged user namespaces: try one in a child, as the kernel and its policies decide.
	cmd := os.Args[0]
	attr := &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET}}
	pid, err := syscall.ForkExec(cmd, []string{cmd, "-h"}, attr)
	if err == nil {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
		p.UserNamespace = true
	} else {
		p.UserNSError = err.Error()
	}
	return p
}
