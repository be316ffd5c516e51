package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// The network-namespace tier: the program gets a private user and network namespace whose
// only interface is its own loopback, on which the launcher opens one listening socket, on the
// controller's port, and hands it to the controller (SCM_RIGHTS over -listen-sock). The
// controller serves that socket, so 127.0.0.1:PORT inside is the controller and nothing else
// on the host or beyond is reachable.

const innerEnv = "GOCODE_LAUNCHER_INNER"

// enterNetns re-runs the launcher in new user and network namespaces, waits for it, and exits
// as it did. The inner launcher confines itself and execs the program as usual.
func enterNetns() {
	uid, gid := os.Getuid(), os.Getgid()
	// By path, not /proc/self/exe: after a user switch the process is not dumpable and
	// /proc/self is out of reach. The controller passes an absolute path.
	// The status pipe and the listen socket become descriptors 3 and 4 of the inner launcher (the
	// go-ahead pipe 5);
	// flags given later win, so the overrides go just before "--".
	args := append([]string(nil), os.Args[1:]...)
	cut := len(args)
	for i, a := range args {
		if a == "--" {
			cut = i
			break
		}
	}
	overrides := []string{"-status-fd", "3", "-listen-sock", "4"}
	extra := []*os.File{os.NewFile(uintptr(*statusFD), "status"), os.NewFile(uintptr(*listenSock), "listen")}
	if *goFD >= 0 { // the inner launcher waits for the go-ahead (descriptor 5)
		overrides = append(overrides, "-go-fd", "5")
		extra = append(extra, os.NewFile(uintptr(*goFD), "go"))
	}
	inner := append(append(append([]string(nil), args[:cut]...), overrides...), args[cut:]...)
	cmd := exec.Command(os.Args[0], inner...)
	cmd.Env = append(os.Environ(), innerEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = extra
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		AmbientCaps:                []uintptr{unix.CAP_NET_ADMIN},
		Pdeathsig:                  syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		fail("network namespace: %v", err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// Die the same way, so the controller sees the signal (a CPU limit's SIGKILL).
			_ = unix.Prctl(unix.PR_SET_PDEATHSIG, 0, 0, 0, 0)
			signal := ws.Signal()
			_ = syscall.Kill(os.Getpid(), signal)
		}
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		fail("network namespace: %v", err)
	}
	os.Exit(0)
}

// openEndpoint brings up loopback in the new namespace, listens on 127.0.0.1:port and sends
// the listening socket to the controller; the launcher keeps no copy.
func openEndpoint(port int, sock int) error {
	ctl, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %v", err)
	}
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(ctl, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing up lo: %v", err)
	}
	unix.Close(ctl)
	l, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %v", err)
	}
	if err := unix.Bind(l, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("bind 127.0.0.1:%d: %v", port, err)
	}
	if err := unix.Listen(l, 128); err != nil {
		return fmt.Errorf("listen: %v", err)
	}
	if err := unix.Sendmsg(sock, []byte{1}, unix.UnixRights(l), nil, 0); err != nil {
		return fmt.Errorf("handing the listener to the controller: %v", err)
	}
	unix.Close(l)
	unix.Close(sock)
	return nil
}
