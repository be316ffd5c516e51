package main

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp layer: a deny-list on top of Landlock, for what Landlock does not cover
// (measured in the project's research notes): new processes, memfd exec, sockets other than
// plain TCP (MPTCP, UDP, UNIX, netlink, vsock), signals and limits on other processes,
// path-based metadata writes, io_uring, namespaces and other kernel surfaces. A deny-list, not
// an allow-list, because the Go runtime's own syscalls change between Go versions.

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retKill  = unix.SECCOMP_RET_KILL_PROCESS
	retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retNOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)

	offNr   = 0
	offArch = 4

	// Syscalls newer than some x/sys tables; the numbers are the same on every architecture.
	sysFchmodat2     = 452
	sysSetxattrat    = 463
	sysRemovexattrat = 466
	fioSetown        = 0x8901 // FIOSETOWN (not in x/sys)

	cloneNewMask = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
		unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWTIME
)

func offArg(i int) uint32 { return uint32(16 + 8*i) } // low 32 bits, little-endian

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jeq(k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: jt, Jf: jf, K: k}
}

func ld(off uint32) unix.SockFilter { return stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }
func ret(v uint32) unix.SockFilter  { return stmt(unix.BPF_RET|unix.BPF_K, v) }

// forSyscall guards a block with "if nr == sys"; the block must end in returns.
func forSyscall(sys uintptr, block ...unix.SockFilter) []unix.SockFilter {
	out := []unix.SockFilter{ld(offNr), jeq(uint32(sys), 0, uint8(len(block)))}
	return append(out, block...)
}

// onlySelf allows the call only when its first argument is this process (or 0, when zeroOK).
func onlySelf(sys uintptr, pid int, zeroOK bool) []unix.SockFilter {
	zero := jeq(0, 1, 0)
	if !zeroOK {
		zero = jeq(uint32(pid), 1, 0) // the same test again: no zero case
	}
	return forSyscall(sys, ld(offArg(0)), jeq(uint32(pid), 2, 0), zero, ret(retEPERM), ret(retAllow))
}

func denied() []uintptr {
	list := []uintptr{
		unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_KCMP,
		unix.SYS_PIDFD_OPEN, unix.SYS_PIDFD_SEND_SIGNAL, unix.SYS_PIDFD_GETFD,
		unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
		unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
		unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_KEYCTL,
		unix.SYS_UNSHARE, unix.SYS_SETNS, unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
		unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
		unix.SYS_MOUNT_SETATTR, unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE,
		unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE, unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF,
		unix.SYS_ACCT, unix.SYS_QUOTACTL, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
		unix.SYS_FANOTIFY_INIT, unix.SYS_SYSLOG, unix.SYS_PERSONALITY,
		unix.SYS_EXECVEAT, unix.SYS_MEMFD_CREATE, unix.SYS_SOCKETPAIR,
		unix.SYS_FCHMODAT, sysFchmodat2, unix.SYS_FCHOWNAT, unix.SYS_UTIMENSAT,
		unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR,
		sysSetxattrat, sysRemovexattrat,
		unix.SYS_SETPRIORITY, unix.SYS_IOPRIO_SET, unix.SYS_MIGRATE_PAGES, unix.SYS_MOVE_PAGES,
		unix.SYS_TKILL, unix.SYS_TRUNCATE,
		// No listening: listen() on an unbound socket binds a port, which Landlock never sees.
		unix.SYS_LISTEN,
		// SysV IPC and POSIX message queues live outside any directory Landlock guards (and
		// shared memory would outlive the run and its memory limit).
		unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_SHMCTL, unix.SYS_SHMDT,
		unix.SYS_MSGGET, unix.SYS_MSGSND, unix.SYS_MSGRCV, unix.SYS_MSGCTL,
		unix.SYS_SEMGET, unix.SYS_SEMOP, unix.SYS_SEMTIMEDOP, unix.SYS_SEMCTL,
		unix.SYS_MQ_OPEN, unix.SYS_MQ_UNLINK, unix.SYS_MQ_TIMEDSEND, unix.SYS_MQ_TIMEDRECEIVE,
		unix.SYS_MQ_NOTIFY, unix.SYS_MQ_GETSETATTR,
		// inotify watches need only read access to name what happens in a directory.
		unix.SYS_INOTIFY_INIT1, unix.SYS_INOTIFY_ADD_WATCH,
		// Leaving the process group (or session) would escape the controller's group kill.
		unix.SYS_SETPGID, unix.SYS_SETSID,
	}
	return append(list, archDenied...)
}

func filter(pid int) []unix.SockFilter {
	p := []unix.SockFilter{ld(offArch), jeq(auditArch, 1, 0), ret(retKill)}
	p = append(p, archPrologue...)
	for _, sys := range denied() {
		p = append(p, ld(offNr), jeq(uint32(sys), 0, 1), ret(retEPERM))
	}
	p = append(p, forSyscall(unix.SYS_CLONE3, ret(retNOSYS))...) // Go falls back to clone
	// clone: threads only, no namespaces.
	p = append(p, forSyscall(unix.SYS_CLONE,
		ld(offArg(cloneFlagsArg)),
		unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, Jt: 2, K: cloneNewMask},
		unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, Jf: 1, K: unix.CLONE_THREAD},
		ret(retAllow), ret(retEPERM))...)
	// socket: AF_INET/AF_INET6, SOCK_STREAM, protocol 0 or TCP (no MPTCP, UDP, raw, UNIX, netlink, vsock).
	p = append(p, forSyscall(unix.SYS_SOCKET,
		ld(offArg(0)), jeq(unix.AF_INET, 2, 0), jeq(unix.AF_INET6, 1, 0), ret(retEPERM),
		ld(offArg(1)), stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, 0xf), jeq(unix.SOCK_STREAM, 1, 0), ret(retEPERM),
		ld(offArg(2)), jeq(0, 2, 0), jeq(unix.IPPROTO_TCP, 1, 0), ret(retEPERM), ret(retAllow))...)
	// Signals, limits and scheduling only on itself (the pid survives exec).
	for _, sys := range []uintptr{unix.SYS_KILL, unix.SYS_TGKILL, unix.SYS_RT_SIGQUEUEINFO, unix.SYS_RT_TGSIGQUEUEINFO} {
		p = append(p, onlySelf(sys, pid, false)...)
	}
	for _, sys := range []uintptr{unix.SYS_PRLIMIT64, unix.SYS_SCHED_SETAFFINITY, unix.SYS_SCHED_SETSCHEDULER, unix.SYS_SCHED_SETPARAM, unix.SYS_SCHED_SETATTR} {
		p = append(p, onlySelf(sys, pid, true)...)
	}
	// No faking terminal input; no SIGIO owner (a signal to any process, before Landlock ABI 6).
	p = append(p, forSyscall(unix.SYS_IOCTL,
		ld(offArg(1)), jeq(unix.TIOCSTI, 3, 0), jeq(unix.TIOCLINUX, 2, 0), jeq(fioSetown, 1, 0),
		jeq(unix.SIOCSPGRP, 0, 1), ret(retEPERM), ret(retAllow))...)
	p = append(p, forSyscall(unix.SYS_FCNTL,
		ld(offArg(1)), jeq(unix.F_SETOWN, 2, 0), jeq(unix.F_SETOWN_EX, 1, 0), jeq(unix.F_SETSIG, 0, 1),
		ret(retEPERM), ret(retAllow))...)
	// TCP Fast Open sends a SYN from sendto/sendmsg, past Landlock's connect rule.
	for _, c := range []struct {
		sys uintptr
		arg int
	}{{unix.SYS_SENDTO, 3}, {unix.SYS_SENDMSG, 2}, {unix.SYS_SENDMMSG, 3}} {
		p = append(p, forSyscall(c.sys,
			ld(offArg(c.arg)),
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, Jt: 0, Jf: 1, K: unix.MSG_FASTOPEN},
			ret(retEPERM), ret(retAllow))...)
	}
	p = append(p, forSyscall(unix.SYS_SETSOCKOPT,
		ld(offArg(1)), jeq(unix.IPPROTO_TCP, 0, 4),
		ld(offArg(2)), jeq(unix.TCP_FASTOPEN, 1, 0), jeq(unix.TCP_FASTOPEN_CONNECT, 0, 1),
		ret(retEPERM), ret(retAllow))...)
	// Keep the parent-death signal: without it a program could outlive the launcher's kill.
	p = append(p, forSyscall(unix.SYS_PRCTL,
		ld(offArg(0)), jeq(unix.PR_SET_PDEATHSIG, 0, 1), ret(retEPERM), ret(retAllow))...)
	return append(p, ret(retAllow))
}

func installSeccomp(pid int) error {
	prog := filter(pid)
	if len(prog) > 4096 {
		return fmt.Errorf("filter too long (%d instructions)", len(prog))
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return e
	}
	return nil
}

func seccompSupported() bool {
	action := uint32(retKill)
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
	return e == 0
}
