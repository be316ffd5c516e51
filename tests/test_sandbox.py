"""The sandbox against a hostile corpus, through the real execute_go_code path (Toolbox, pooled).

Every case tries one escape; whether it was contained is checked from outside the program:
canary files unchanged, decoy TCP/UDP/UNIX listeners never hit, a victim process and its
limits intact, the controller's secrets never in the output. Benign programs must keep
working. A host without Landlock/seccomp fails this module unless GOCODE_SANDBOX_TESTS=skip.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from gocode import SyncToolbox
from gocode.run.cgroups import run_cgroups
from gocode.run.sandbox import FAKE_ABI_ENV, FAKE_NO_USERNS_ENV, RUN_UIDS
from tests.conftest import config_from, demo_stdio

pytestmark = pytest.mark.go

SECRET = "gocode-secret-" + uuid.uuid4().hex
SHM_KEY = 0x5EC0 + os.getpid() % 1000


def host_supports_sandbox(module_cache) -> str:
    import anyio

    from gocode.run.sandbox import decide, launcher_for

    host = anyio.run(launcher_for(module_cache).probe)
    return decide("on", host).error


@pytest.fixture(
    scope="module",
    params=[("netns", "nobody"), ("netns", "self"), ("landlock", "nobody"), ("landlock", "self")],
    ids=lambda p: f"{p[0]}-{p[1]}",
)
def world(request, tmp_path_factory, module_cache) -> Iterator[dict]:
    """Things outside the sandbox that must stay untouched, and a toolbox with the sandbox on.

    For each tier (netns; landlock, by making the probe report no user namespaces) and each
    user: the program as gocode's own user (root in CI: with every capability dropped) and as
    an unprivileged user, so the confinement holds for all. Run by root, gocode drops the
    program to nobody; run by anyone else, gocode's own user is the unprivileged one.
    """
    tier, user = request.param
    setting = user if user == "self" or os.geteuid() == 0 else "self"
    if tier == "landlock":
        os.environ[FAKE_NO_USERNS_ENV] = "1"
    else:
        os.environ.pop(FAKE_NO_USERNS_ENV, None)
    problem = host_supports_sandbox(module_cache)
    if problem:
        if os.environ.get("GOCODE_SANDBOX_TESTS") == "skip":
            pytest.skip(f"sandbox unsupported here, skipping as asked: {problem}")
        pytest.fail(f"this host cannot run the sandbox tests ({problem}); set GOCODE_SANDBOX_TESTS=skip to skip them")
    outside = tmp_path_factory.mktemp("outside")
    canary = outside / "canary.txt"
    canary.write_text("canary " + SECRET)
    os.chmod(canary, 0o644)
    os.utime(canary, (1_000_000_000, 1_000_000_000))
    hits: dict[str, int] = {"tcp": 0, "udp": 0, "unix": 0, "abstract": 0, "other-address": 0}
    stop = threading.Event()

    def serve(sock: socket.socket, kind: str, stream: bool = True) -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                if stream:
                    conn, _ = sock.accept()
                    conn.close()
                else:
                    sock.recvfrom(65536)
                hits[kind] += 1
            except (TimeoutError, OSError):
                continue

    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix_path = outside / "decoy.sock"
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(unix_path))
    unix.listen()
    abstract_name = "\0gocode-decoy-" + uuid.uuid4().hex[:8]
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(abstract_name)
    abstract.listen()
    threads = [
        threading.Thread(target=serve, args=(tcp, "tcp"), daemon=True),
        threading.Thread(target=serve, args=(udp, "udp", False), daemon=True),
        threading.Thread(target=serve, args=(unix, "unix"), daemon=True),
        threading.Thread(target=serve, args=(abstract, "abstract"), daemon=True),
    ]
    for t in threads:
        t.start()
    victim = subprocess.Popen(["sleep", "600"])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    shm_id = libc.shmget(SHM_KEY, 4096, 0o1000 | 0o600)  # IPC_CREAT, owner-only
    shm = libc.shmat(shm_id, None, 0)
    ctypes.memmove(shm, SECRET.encode(), len(SECRET))
    os.environ["GOCODE_TEST_SECRET"] = SECRET  # the controller's environment: never the program's
    config = config_from(
        {"weather": demo_stdio()},
        defaults={
            "codeMode": {
                "sandbox": "on",
                "timeout": 20,
                "limits": {
                    "memoryMB": 256,
                    "scratchMB": 16,
                    "cpuSeconds": 4,
                    "fileSizeMB": 8,
                    "user": setting,
                },
            }
        },
    )
    box = SyncToolbox(config, module_cache=module_cache)
    try:
        port = box.toolbox._loopback.port
        other_addr = socket.socket()
        other_addr.bind(("127.0.0.2", port))  # the controller's port on another address
        other_addr.listen()
        threading.Thread(target=serve, args=(other_addr, "other-address"), daemon=True).start()
        yield {
            "tier": tier,
            "loopback_port": port,
            "user": user,
            "box": box,
            "outside": outside,
            "canary": canary,
            "hits": hits,
            "victim": victim,
            "shm": (libc, shm),
            "victim_limits": Path(f"/proc/{victim.pid}/limits").read_text(),
            "victim_nice": os.getpriority(os.PRIO_PROCESS, victim.pid),
            "ports": {"tcp": tcp.getsockname()[1], "udp": udp.getsockname()[1]},
            "unix": str(unix_path),
            "abstract": abstract_name[1:],
        }
    finally:
        box.close()
        other_addr.close()
        libc.shmdt(ctypes.c_void_p(shm))
        libc.shmctl(shm_id, 0, None)  # IPC_RMID
        os.environ.pop(FAKE_NO_USERNS_ENV, None)
        stop.set()
        victim.kill()
        victim.wait()
        os.environ.pop("GOCODE_TEST_SECRET", None)
        for s in (tcp, udp, unix, abstract):
            s.close()


def with_imports(code: str) -> str:
    """Import what a case uses that gocode does not import by itself (syscall, unsafe)."""
    extra = [pkg for pkg in ("syscall", "unsafe") if f"{pkg}." in code and f'import "{pkg}"' not in code]
    return "".join(f'import "{pkg}"\n' for pkg in extra) + code


def subst(code: str, w: dict) -> str:
    return (
        with_imports(code)
        .replace("CANARY", json.dumps(str(w["canary"])))
        .replace("OUTSIDE", json.dumps(str(w["outside"])))
        .replace("VICTIM", str(w["victim"].pid))
        .replace("TCPPORT", str(w["ports"]["tcp"]))
        .replace("UDPPORT", str(w["ports"]["udp"]))
        .replace("UNIXPATH", json.dumps(w["unix"]))
        .replace("ABSTRACT", json.dumps("@" + w["abstract"]))
        .replace("LOOPBACKPORT", str(w["loopback_port"]))
        .replace("SHMKEY", str(SHM_KEY))
    )


HOSTILE = {
    "read outside scratch": 'b, err := os.ReadFile(CANARY)\nfmt.Println(string(b), err)\nb, err = os.ReadFile("/etc/passwd")\nfmt.Println(string(b), err)',
    "list outside scratch": 'es, err := os.ReadDir(OUTSIDE)\nfmt.Println(len(es), err)\nes, err = os.ReadDir("/")\nfmt.Println(len(es), err)',
    "write outside scratch": 'fmt.Println(os.WriteFile(OUTSIDE+"/new.txt", []byte("x"), 0o644))\nf, err := os.OpenFile(CANARY, os.O_WRONLY|os.O_APPEND, 0)\nfmt.Println(f, err)',
    "symlink out of scratch": 'fmt.Println(os.Symlink(CANARY, "link"))\nb, err := os.ReadFile("link")\nfmt.Println(string(b), err)',
    "hardlink into scratch": 'fmt.Println(os.Link(CANARY, "hard"))\nfmt.Println(os.WriteFile("hard", []byte("pwned"), 0o644))',
    "rename out of scratch": 'os.WriteFile("f", []byte("x"), 0o600)\nfmt.Println(os.Rename("f", OUTSIDE+"/moved"))',
    "chmod and utimes outside": "fmt.Println(os.Chmod(CANARY, 0o777))\nfmt.Println(os.Chtimes(CANARY, time.Now(), time.Now()))",
    "exec a program": 'import "os/exec"\nfmt.Println(exec.Command("/bin/sh", "-c", "touch "+OUTSIDE+"/exec-pwned").Run())',
    "fork": '_, _, e := syscall.RawSyscall(syscall.SYS_FORK, 0, 0, 0)\nfmt.Println(e)\n_, err := syscall.ForkExec("/bin/true", nil, nil)\nfmt.Println(err)',
    "memfd exec": 'fd, _, e := syscall.RawSyscall(319, uintptr(unsafe.Pointer(&[]byte("x\\x00")[0])), 0, 0)\nfmt.Println(fd, e)\n_, _, e = syscall.RawSyscall6(322, fd, uintptr(unsafe.Pointer(&[]byte("\\x00")[0])), 0, 0, 0x1000, 0)\nfmt.Println(e)',
    "signal another process": "fmt.Println(syscall.Kill(VICTIM, syscall.SIGTERM))",
    "prlimit and nice on another process": "lim := [2]uint64{1, 1}\n_, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, VICTIM, 7, uintptr(unsafe.Pointer(&lim)), 0, 0, 0)\nfmt.Println(e)\nfmt.Println(syscall.Setpriority(syscall.PRIO_PROCESS, VICTIM, 19))",
    "other TCP port": 'import "net"\n_, err := net.Dial("tcp", "127.0.0.1:TCPPORT")\nfmt.Println(err)',
    "TCP Fast Open to another port": 'fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)\nfmt.Println(err)\nerr = syscall.Sendto(fd, []byte("GET / HTTP/1.0\\r\\n\\r\\n"), syscall.MSG_FASTOPEN, &syscall.SockaddrInet4{Port: TCPPORT, Addr: [4]byte{127, 0, 0, 1}})\nfmt.Println(err)\nfmt.Println(syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, 30, 1))',
    "listening without bind": 'fd, _ := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)\nerr := syscall.Listen(fd, 5)\nfmt.Println("listen:", err)\nif err == nil {\n\treturn errors.New("listening")\n}',
    "SysV shared memory and message queues": "id, _, e := syscall.RawSyscall(syscall.SYS_SHMGET, SHMKEY, 0, 0)\nfmt.Println(id, e)\n_, _, e = syscall.RawSyscall(syscall.SYS_SHMGET, 0, 1<<28, 01000|0o600)\nfmt.Println(e)\n_, _, e = syscall.RawSyscall(syscall.SYS_MSGGET, 0, 01000|0o600, 0)\nfmt.Println(e)",
    "POSIX message queue": 'name := []byte("gocode-test-mq\\x00")\n_, _, e := syscall.RawSyscall6(syscall.SYS_MQ_OPEN, uintptr(unsafe.Pointer(&name[0])), uintptr(os.O_CREATE|os.O_RDWR), 0o600, 0, 0, 0)\nfmt.Println(e)',
    "inotify on outside paths": "fd, err := syscall.InotifyInit1(0)\nfmt.Println(fd, err)\n_, err = syscall.InotifyAddWatch(fd, OUTSIDE, syscall.IN_ALL_EVENTS)\nfmt.Println(err)",
    "SIGIO to another process": 'var p [2]int\nsyscall.Pipe(p[:])\nfmt.Println(syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(p[0]), syscall.F_SETOWN, VICTIM))\nfmt.Println(syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(p[0]), 10, 9))\nsyscall.RawSyscall(syscall.SYS_FCNTL, uintptr(p[0]), syscall.F_SETFL, syscall.O_ASYNC)\nsyscall.Write(p[1], []byte("x"))\ntime.Sleep(200 * time.Millisecond)',
    "the controller's port on another address": 'import "net"\n_, err := net.Dial("tcp", "127.0.0.2:LOOPBACKPORT")\nfmt.Println(err)',
    "MPTCP": "fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 262)\nfmt.Println(fd, err)\nif err == nil {\n\tfmt.Println(syscall.Connect(fd, &syscall.SockaddrInet4{Port: TCPPORT, Addr: [4]byte{127, 0, 0, 1}}))\n}",
    "UDP": 'import "net"\nc, err := net.Dial("udp", "127.0.0.1:UDPPORT")\nif err == nil {\n\t_, err = c.Write([]byte("x"))\n}\nfmt.Println(err)',
    "UNIX socket by path": 'import "net"\n_, err := net.Dial("unix", UNIXPATH)\nfmt.Println(err)',
    "abstract UNIX socket": 'import "net"\n_, err := net.Dial("unix", ABSTRACT)\nfmt.Println(err)',
    "io_uring": "var params [120]byte\n_, _, e := syscall.RawSyscall(425, 8, uintptr(unsafe.Pointer(&params)), 0)\nfmt.Println(e)",
    "the controller's environment": 'fmt.Println(os.Environ())\nb, err := os.ReadFile("/proc/1/environ")\nfmt.Println(string(b), err)\nb, err = os.ReadFile(fmt.Sprintf("/proc/%d/environ", os.Getppid()))\nfmt.Println(string(b), err)',
    "init() and a closed Run": 'return nil\n}\n\nfunc init() {\n\tos.WriteFile(OUTSIDE+"/init-pwned", []byte("x"), 0o644)\n}\n\nfunc gocodeAgain() error {\n\treturn nil',
    "an init function": 'func init() {\n\tos.WriteFile(OUTSIDE+"/init-pwned", []byte("x"), 0o644)\n}\n\nfmt.Println("ran")',
    "package initialiser": 'func evil() int {\n\tos.WriteFile(OUTSIDE+"/init-pwned", []byte("x"), 0o644)\n\treturn 1\n}\n\nvar pwned = evil()\n\nfmt.Println(pwned)',
    "the MCP endpoint without the token": 'import "net/http"\nimport "strings"\nvar specs map[string]struct{ URL string `json:"url"` }\njson.Unmarshal([]byte(os.Getenv("GOCODE_SERVERS")), &specs)\nbody := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_city","arguments":{}}}`\nresp, err := http.Post(specs["weather"].URL, "application/json", strings.NewReader(body))\nif err != nil {\n\treturn err\n}\nfmt.Println("status", resp.StatusCode)',
}


# Cases whose effect cannot be seen from outside: the refusal itself is the evidence. (A
# refused call returns -1 as the unsigned word 18446744073709551615 and the errno EPERM.)
REFUSED_IN_OUTPUT = {
    "fork": "operation not permitted\noperation not permitted\n",
    "memfd exec": "18446744073709551615 operation not permitted\noperation not permitted\n",
    "io_uring": "operation not permitted\n",
    "SysV shared memory and message queues": (
        "18446744073709551615 operation not permitted\noperation not permitted\noperation not permitted\n"
    ),
    "listening without bind": "listen: operation not permitted",
    "inotify on outside paths": "-1 operation not permitted",
    "TCP Fast Open to another port": "operation not permitted\noperation not permitted",
}

# What the landlock tier does not contain, by design (docs/sandbox.md): port rules, any address.
LANDLOCK_GAPS = {"the controller's port on another address"}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_program_is_contained(world, case):
    if world["tier"] == "landlock" and case in LANDLOCK_GAPS:
        pytest.skip("the landlock tier's network rule is per port, on any address (documented)")
    before_hits = dict(world["hits"])
    r = world["box"].execute(subst(HOSTILE[case], world))
    out = r.output + r.stderr
    assert SECRET not in out, f"{case}: the secret leaked: {out[:500]}"
    assert world["canary"].read_text() == "canary " + SECRET
    st = world["canary"].stat()
    assert (st.st_mode & 0o777, int(st.st_mtime)) == (0o644, 1_000_000_000)
    assert sorted(p.name for p in world["outside"].iterdir()) == ["canary.txt", "decoy.sock"]
    time.sleep(0.3)  # let a decoy record a late hit
    assert world["hits"] == before_hits, f"{case}: a decoy was reached"
    assert world["victim"].poll() is None, f"{case}: the victim was killed"
    assert ctypes.string_at(world["shm"][1], len(SECRET)) == SECRET.encode(), f"{case}: shared memory changed"
    assert not Path("/dev/mqueue/gocode-test-mq").exists(), f"{case}: a message queue was created"
    leftover = programs_of(world)
    assert leftover == [], f"{case}: processes outlived the run: {leftover}"
    assert Path(f"/proc/{world['victim'].pid}/limits").read_text() == world["victim_limits"]
    assert os.getpriority(os.PRIO_PROCESS, world["victim"].pid) == world["victim_nice"]
    if case in ("init() and a closed Run", "an init function") and r.phase in ("code", "compile"):
        pass  # refused before it could be built: contained too
    else:  # the attempt really ran, confined
        assert r.phase not in ("code", "compile"), r.error_text()
        assert r.sandbox and r.sandbox["tier"] == world["tier"], r.error_text()
    if case in REFUSED_IN_OUTPUT:
        assert REFUSED_IN_OUTPUT[case] in r.output, r.output
    if case == "the MCP endpoint without the token":
        assert "status 401" in r.output and r.tool_calls == []


def programs_of(world: dict) -> list[Path]:
    """Live programs of this toolbox's runs: sandboxed binaries (run from a per-run directory)
    whose environment names this toolbox's loopback port (other gocode runs on the host do not)."""
    port = f":{world['loopback_port']}/".encode()
    found = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit() and _cmdline(p).startswith("/tmp/gocode-run-"):
            try:
                if port in (p / "environ").read_bytes():
                    found.append(p)
            except OSError:
                continue
    return found


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""


def test_a_program_cannot_outlive_its_run(world):
    code = 'import "syscall"\nsyscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, 0, 0)\nfmt.Println(syscall.Setpgid(0, 0))\nfmt.Println(syscall.Setsid())\ntime.Sleep(time.Hour)'
    r = world["box"].execute(code, 3)
    assert r.phase == "timeout", r.error_text()
    # Killed processes leave /proc once the kernel has run their exit, which a busy machine
    # delays; one that escaped the kill would still be there after the hour it sleeps.
    deadline = time.monotonic() + 60
    while (leftover := programs_of(world)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert leftover == [], leftover


def test_deleted_open_files_count_against_the_scratch_limit(world):
    code = (
        'var keep []*os.File\nfor i := 0; i < 64; i++ {\n\tf, err := os.Create(filepath.Join(os.TempDir(), fmt.Sprintf("f%d", i)))\n'
        "\tif err != nil {\n\t\treturn err\n\t}\n\tf.Write(make([]byte, 4<<20))\n\tos.Remove(f.Name())\n"
        "\tkeep = append(keep, f)\n}\ntime.Sleep(5 * time.Second)\nfmt.Println(len(keep))"
    )
    r = world["box"].execute(code)
    assert r.phase == "limit" and "scratch directory" in r.stderr, r.error_text()


def test_a_fork_bomb_forks_nothing(world):
    code = (
        "var forked, refused atomic.Int64\nvar wg sync.WaitGroup\nfor i := 0; i < 2000; i++ {\n\twg.Add(1)\n"
        '\tgo func() {\n\t\tdefer wg.Done()\n\t\tif _, err := syscall.ForkExec("/bin/true", nil, nil); err == nil {\n'
        "\t\t\tforked.Add(1)\n\t\t} else {\n\t\t\trefused.Add(1)\n\t\t}\n\t}()\n}\nwg.Wait()\n"
        'fmt.Println("forked", forked.Load(), "refused", refused.Load())'
    )
    r = world["box"].execute(with_imports(code))
    assert r.ok and r.output == "forked 0 refused 2000\n", r.error_text()
    assert world["victim"].poll() is None


def test_a_thread_bomb_ends_at_a_limit(world):
    """A cgroup per run (where the host has one) or a user per run (as root) stops it at the
    run's thread limit; without either, gocode's own user's RLIMIT_NPROC, or the memory limit
    for root (exempt from RLIMIT_NPROC) ends it."""
    code = 'for i := 0; i < 100000; i++ {\n\tgo func() {\n\t\truntime.LockOSThread()\n\t\ttime.Sleep(time.Minute)\n\t}()\n}\ntime.Sleep(10 * time.Second)\nfmt.Println("done")'
    r = world["box"].execute(code)
    assert r.output == "", r.error_text()
    if run_cgroups.mechanism() or (os.geteuid() == 0 and world["user"] == "nobody"):
        # A cgroup per run, or a user per run: the run's own 2048, named, not retryable.
        assert r.phase == "limit", r.error_text()
        assert "failed to create new OS thread" in r.stderr or "pthread_create failed" in r.stderr, r.stderr[:500]
        assert r.stderr.endswith("(sandbox: at most 2048 threads and processes per run: codeMode.limits.threads)")
    elif os.geteuid() != 0 and 0 <= resource.getrlimit(resource.RLIMIT_NPROC)[0] < 8192:
        # gocode's own unprivileged user, under a limit its other processes share
        assert r.phase == "resources", r.error_text()
    else:
        assert r.phase == "runtime", r.error_text()
        assert "the memory limit is 256 MiB: codeMode.limits.memoryMB" in r.stderr, r.stderr[-500:]
    assert world["victim"].poll() is None


HOLDER = """\
release := make(chan struct{})
var wg sync.WaitGroup
for i := 0; i < 2030; i++ {
	wg.Add(1)
	go func() {
		runtime.LockOSThread()
		wg.Done()
		<-release
	}()
}
wg.Wait()
time.Sleep(8 * time.Second)
close(release)
fmt.Println("held 2030 threads")
"""


def test_a_program_near_its_thread_limit_leaves_others_theirs(world):
    """The thread limit counts a user's threads host-wide: each run has a user of its own, so a
    program holding almost all of its threads does not stop another from starting."""
    holder: dict[str, object] = {}
    t = threading.Thread(target=lambda: holder.update(r=world["box"].execute(HOLDER)))
    t.start()
    time.sleep(4)  # the holder has its threads by now (they take well under a second)
    r = world["box"].execute('fmt.Println("still here")')
    t.join(60)
    assert r.ok and r.output == "still here\n", r.error_text()
    held = holder["r"]
    assert held.ok and held.output == "held 2030 threads\n", held.error_text()


def test_output_flood_is_capped(world):
    r = world["box"].execute('s := strings.Repeat("x", 1<<20)\nfor i := 0; i < 200; i++ {\n\tfmt.Print(s)\n}')
    assert r.truncated and len(r.output) < 100_000


def test_full_disk_hits_the_scratch_limit(world):
    code = 'buf := make([]byte, 1<<20)\nfor i := 0; ; i++ {\n\tif err := os.WriteFile(filepath.Join(os.TempDir(), fmt.Sprintf("f%d", i)), buf, 0o600); err != nil {\n\t\treturn err\n\t}\n}'
    r = world["box"].execute(code)
    assert r.phase == "limit" and "more than 16 MiB into its scratch directory" in r.stderr, r.error_text()


def test_memory_and_cpu_limits_name_themselves(world):
    r = world["box"].execute(
        "var keep [][]byte\nfor {\n\tkeep = append(keep, make([]byte, 64<<20))\n\tkeep[len(keep)-1][0] = 1\n}"
    )
    assert not r.ok and "the memory limit is 256 MiB: codeMode.limits.memoryMB" in r.stderr, r.error_text()
    r = world["box"].execute("x := 0\nfor {\n\tx++\n}")
    assert not r.ok and "the CPU-time limit is 4 s: codeMode.limits.cpuSeconds" in r.stderr, r.error_text()
    r = world["box"].execute('f, _ := os.Create("big")\n_, err := f.Write(make([]byte, 9<<20))\nreturn err')
    assert not r.ok and "files may not exceed 8 MiB" in r.stderr, r.error_text()


BENIGN = """\
import "crypto/rand"
import "crypto/sha256"
city, err := getCity(ctx)
if err != nil {
	return err
}
g, gctx := errgroup.WithContext(ctx)
temps := make([]float64, 8)
for i := range temps {
	g.Go(func() error {
		w, err := getWeather(gctx, GetWeatherInput{City: city.City})
		temps[i] = w.Temperature
		return err
	})
}
if err := g.Wait(); err != nil {
	return err
}
if err := os.MkdirAll(filepath.Join(os.Getenv("HOME"), "d/e"), 0o700); err != nil {
	return err
}
if err := os.WriteFile(filepath.Join(os.Getenv("HOME"), "d/e/f.json"), []byte(`{"a": 1}`), 0o600); err != nil {
	return err
}
raw, err := os.ReadFile(filepath.Join(os.Getenv("HOME"), "d/e/f.json"))
if err != nil {
	return err
}
var doc map[string]int
if err := json.Unmarshal(raw, &doc); err != nil {
	return err
}
tmp, err := os.CreateTemp("", "x")
if err != nil {
	return err
}
tmp.Close()
os.Remove(tmp.Name())
loc, err := time.LoadLocation("Europe/Paris")
if err != nil {
	return err
}
key := make([]byte, 16)
rand.Read(key)
sum := sha256.Sum256(key)
fmt.Println(city.City, temps[7], doc["a"], loc.String(), len(sum), time.Now().Year() > 2000)
"""


def test_benign_programs_work_sandboxed(world):
    r = world["box"].execute(BENIGN)
    assert r.ok, r.error_text()
    assert r.output == "Paris 18.5 1 Europe/Paris 32 true\n"
    assert r.sandbox["tier"] == world["tier"] and r.sandbox["landlockAbi"] >= 4
    if world["user"] == "nobody" and os.geteuid() == 0:
        assert r.sandbox["uid"] in RUN_UIDS  # a user of its own, not nobody shared by every run
    else:
        assert r.sandbox["uid"] == os.geteuid()
    assert len(r.tool_calls) == 9


def test_policy_in_every_result_and_the_model_is_told(world):
    result = world["box"].call("execute_go_code", {"code": 'fmt.Println("hi")'})
    meta = result.result.meta["io.gocode/run"]["sandbox"]
    assert meta["tier"] == world["tier"] and meta["limits"]["dataBytes"] == 256 << 20
    assert (
        f"sandboxed ({world['tier']} tier): files only in its working directory" in world["box"].tools()[0].description
    )


def test_unsupported_host_refuses_and_best_effort_says_so(module_cache, tmp_path, monkeypatch):
    marker = tmp_path / "ran"
    code = f'os.WriteFile({json.dumps(str(marker))}, []byte("x"), 0o644)\nfmt.Println("ran")'
    monkeypatch.setenv(FAKE_ABI_ENV, "2")
    monkeypatch.setenv(FAKE_NO_USERNS_ENV, "1")
    expectations = [
        ("on", None, "Landlock ABI 2"),
        ("strict", None, "unprivileged user namespaces are not available"),
        ("best-effort", "landlock-fs", "downgraded to landlock-fs"),
    ]
    for setting, tier, message in expectations:
        cfg = config_from({"weather": demo_stdio()}, defaults={"codeMode": {"sandbox": setting}})
        with SyncToolbox(cfg, module_cache=module_cache) as box:
            r = box.execute(code)
        if tier is None:
            assert r.phase == "sandbox" and not marker.exists(), r.error_text()
            assert message in r.stderr, r.stderr
        else:
            assert r.ok and r.sandbox["tier"] == tier and message in r.sandbox["warning"], r.sandbox
            assert not marker.exists()  # Landlock ABI 2 still confines files
    # No Landlock at all: best-effort runs a benign program under seccomp and the limits only.
    monkeypatch.setenv(FAKE_ABI_ENV, "0")
    cfg = config_from({"weather": demo_stdio()}, defaults={"codeMode": {"sandbox": "best-effort"}})
    with SyncToolbox(cfg, module_cache=module_cache) as box:
        r = box.execute('os.WriteFile("f", []byte("x"), 0o600)\nc, err := getCity(ctx)\nfmt.Println(c.City, err)')
        said = box.call("execute_go_code", {"code": "x := 1\n_ = x"}).text
    assert r.ok and r.output.startswith("Paris <nil>") and r.sandbox["tier"] == "seccomp-only", r.error_text()
    assert "NOT" not in r.sandbox["warning"] and "downgraded to seccomp-only" in r.sandbox["warning"]
    assert "[sandbox best-effort: downgraded to seccomp-only" in said
    # Landlock ABI 2 with user namespaces: the netns tier still confines the network.
    monkeypatch.setenv(FAKE_ABI_ENV, "2")
    monkeypatch.delenv(FAKE_NO_USERNS_ENV)
    cfg = config_from({"weather": demo_stdio()}, defaults={"codeMode": {"sandbox": "strict"}})
    with SyncToolbox(cfg, module_cache=module_cache) as box:
        r = box.execute('w, err := getWeather(ctx, GetWeatherInput{City: "Oslo"})\nfmt.Println(w.Temperature, err)')
    assert r.ok and r.output == "4 <nil>\n" and r.sandbox["tier"] == "netns" and r.sandbox["landlockAbi"] == 2


def test_direct_mode_cannot_be_sandboxed(module_cache):
    import anyio

    from gocode.codemode import CodeMode

    cfg = config_from({"weather": demo_stdio()}, defaults={"codeMode": {"sandbox": "on"}})
    cm = CodeMode(cfg, module_cache=module_cache)
    anyio.run(cm.refresh)
    r = anyio.run(cm.execute, 'fmt.Println("x")')
    assert r.phase == "sandbox" and "pooled sessions" in r.stderr


def test_doctor(module_cache):
    import sys

    gocode = str(Path(sys.executable).parent / "gocode")
    env = {k: v for k, v in os.environ.items() if k not in (FAKE_ABI_ENV, FAKE_NO_USERNS_ENV)}
    r = subprocess.run([gocode, "sandbox", "doctor", "--json"], capture_output=True, text=True, timeout=120, env=env)
    doc = json.loads(r.stdout)
    assert doc["host"]["landlockAbi"] >= 4 and doc["host"]["userNamespaces"]
    assert doc["settings"]["on"]["tier"] == doc["settings"]["strict"]["tier"] == "netns"
    r = subprocess.run(
        [gocode, "sandbox", "doctor"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, FAKE_ABI_ENV: "0"},
    )
    assert "Landlock:         not available" in r.stdout and "best-effort  seccomp-only" in r.stdout


def test_demo_and_the_project_smoke_scripts_pass_sandboxed(tmp_path):
    import sys

    import yaml

    from tests.conftest import ROOT

    gocode = str(Path(sys.executable).parent / "gocode")
    env = {k: v for k, v in os.environ.items() if k not in (FAKE_ABI_ENV, FAKE_NO_USERNS_ENV)}
    r = subprocess.run(
        [gocode, "demo", "--sandbox", "on", "--json"], capture_output=True, text=True, timeout=300, env=env
    )
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["output"].endswith("Weather: 65.3°F, sunny\n"), r.stderr
    assert doc["sandbox"]["tier"] == "netns"
    config = yaml.safe_load((ROOT / "smoke" / "gocode.yaml").read_text())
    config["defaults"] = {"codeMode": {"sandbox": "on"}}
    (tmp_path / "gocode.yaml").write_text(yaml.safe_dump(config))
    r = subprocess.run(
        [gocode, "smoke", "-c", str(tmp_path / "gocode.yaml"), "--scripts", "smoke/scripts", "--json"],
        capture_output=True, text=True, timeout=600, cwd=ROOT, env=env,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert json.loads(r.stdout)["passed"] == 15


def test_the_endpoint_serves_only_code_mode_tools(module_cache):
    """A program that uses its own token directly still reaches only the tools in code mode."""
    cfg = config_from(
        {"weather": demo_stdio()}, defaults={"codeMode": {"sandbox": "on", "excludedTools": ["get_city"]}}
    )
    code = """\
import "net/http"
import "io"
var specs map[string]struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}
json.Unmarshal([]byte(os.Getenv("GOCODE_SERVERS")), &specs)
for _, body := range []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_city","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
} {
	req, _ := http.NewRequest("POST", specs["weather"].URL, strings.NewReader(body))
	for k, v := range specs["weather"].Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(string(b))
}
"""
    with SyncToolbox(cfg, module_cache=module_cache) as box:
        r = box.execute(code)
    assert r.ok, r.error_text()
    refused, listed = r.output.splitlines()[:2]
    assert "not in code mode" in refused and '"get_city"' not in listed and '"get_weather"' in listed
    assert r.tool_calls == []


def test_an_unprivileged_controller_gets_the_netns_tier(module_cache):
    """gocode run by an ordinary user (no capabilities, no setuid helper) still gets the
    strongest tier: the launcher makes its user and network namespaces unprivileged. Run by
    root, this runs gocode as nobody (setpriv), with a cache of its own holding the launcher
    (and not the Go SDK: a warm-up there would take minutes)."""
    import shutil
    import sys
    import sysconfig
    import tempfile

    import anyio

    from gocode.run.sandbox import launcher_for
    from tests.conftest import ROOT

    env = {k: v for k, v in os.environ.items() if k not in (FAKE_ABI_ENV, FAKE_NO_USERNS_ENV)}
    doctor = ["-m", "gocode.cli", "sandbox", "doctor", "--json"]
    if os.geteuid() != 0:
        r = subprocess.run([sys.executable, *doctor], capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["host"]["uid"] == os.geteuid()
        assert doc["settings"]["on"]["tier"] == doc["settings"]["strict"]["tier"] == "netns", doc
        return
    launcher = anyio.run(launcher_for(module_cache).path)
    home = Path(tempfile.mkdtemp(prefix="gocode-unprivileged-", dir="/tmp"))
    try:
        own = home / module_cache.dir.name / "launcher"
        own.mkdir(parents=True)
        shutil.copy2(launcher, own / launcher.name)
        shutil.copy2(module_cache.dir / ".ready", own.parent / ".ready")  # the doctor needs no Go SDK
        for p in [home, *home.rglob("*")]:
            os.chown(p, 65534, 65534)
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "GOCODE_CACHE_DIR": str(home),
            "PYTHONPATH": os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"]]),
        }
        as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"]
        # The test's own interpreter may sit in a directory nobody cannot enter (/root): take
        # the first of it and the system's same-version interpreter that nobody can run.
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        pythons = [sys.executable, shutil.which(version, path="/usr/local/bin:/usr/bin") or ""]
        for python in filter(None, pythons):
            probe = subprocess.run([*as_nobody, python, "-c", "import gocode.cli"], env=env, capture_output=True)
            if probe.returncode == 0:
                break
        else:
            pytest.fail(f"no {version} that nobody can run with gocode importable (tried {pythons})")
        r = subprocess.run([*as_nobody, python, *doctor], capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["host"]["uid"] == 65534 and doc["host"]["userNamespaces"], doc
        assert doc["settings"]["on"]["tier"] == doc["settings"]["strict"]["tier"] == "netns", doc
        assert "module cache ready" not in r.stderr  # it used the launcher given, built nothing
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_a_hundred_configured_servers_leave_the_sandbox_working(tmp_path):
    """The launcher is handed descriptors numbered as they were in the controller, which holds
    three per stdio server: with ~100 servers they lay above the program's open-files limit,
    and starting the network namespace failed with EBADF. Any number of servers must work."""
    import sys

    from tests.conftest import ROOT

    wild = str(ROOT / "tests" / "servers" / "wild_server.py")
    servers = {f"wild{i}": {"command": sys.executable, "args": [wild, "--tools", "plain"]} for i in range(100)}
    config = tmp_path / "gocode.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    program = tmp_path / "p.go"
    program.write_text('fmt.Println("ran beside", 100, "servers")\n')
    env = {k: v for k, v in os.environ.items() if k not in (FAKE_ABI_ENV, FAKE_NO_USERNS_ENV)}
    gocode = str(Path(sys.executable).parent / "gocode")
    r = subprocess.run(
        [gocode, "exec", "--json", "-c", str(config), str(program)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    doc = json.loads(r.stdout)
    assert doc["ok"], doc["stderr"]
    assert doc["output"] == "ran beside 100 servers\n"
    assert doc["sandbox"]["tier"] == "netns"
    r = subprocess.run([gocode, "sandbox", "doctor", "--json"], capture_output=True, text=True, timeout=120, env=env)
    servers_limit = json.loads(r.stdout)["host"]["servers"]
    assert servers_limit["maxStdioServers"] >= 100, servers_limit


CLAIM = """
import sys
from pathlib import Path
from gocode.run.sandbox import UidPool
pool = UidPool(Path(sys.argv[1]))
print(pool.acquire(range(int(sys.argv[2]), int(sys.argv[3]))), flush=True)
sys.stdin.read()
"""


def test_two_gocode_processes_never_run_programs_as_one_user(tmp_path: Path):
    """Run users are claimed host-wide: a second process (a replica, a one-off exec) gets
    another uid while the first holds one, and the uid is free again once its holder dies."""
    from gocode.run.sandbox import UidPool

    uids = range(300_000, 300_004)
    locks = tmp_path / "uids"
    other = subprocess.Popen(
        [sys.executable, "-c", CLAIM, str(locks), str(uids.start), str(uids.stop)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None
        assert int(other.stdout.readline()) == uids.start
        pool = UidPool(locks)
        assert pool.acquire(uids) == uids.start + 1
        assert pool.acquire(uids) == uids.start + 2
    finally:
        other.kill()
        other.wait()
    assert pool.acquire(uids) == uids.start  # the dead holder's claim went with it
    pool.release(uids.start)
    assert UidPool(locks).acquire(uids) == uids.start
