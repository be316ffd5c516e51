package main

import "golang.org/x/sys/unix"

const (
	auditArch     = unix.AUDIT_ARCH_X86_64
	cloneFlagsArg = 0
)

// x32 system calls (the 0x40000000 bit) get ENOSYS: the filter only knows x86-64 numbers.
var archPrologue = []unix.SockFilter{
	ld(offNr),
	{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, Jt: 0, Jf: 1, K: 0x40000000},
	ret(retNOSYS),
}

// Legacy calls arm64 never had.
var archDenied = []uintptr{
	unix.SYS_FORK, unix.SYS_VFORK, unix.SYS_CHMOD, unix.SYS_CHOWN, unix.SYS_LCHOWN,
	unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_FUTIMESAT, unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_MODIFY_LDT,
	unix.SYS_USELIB, unix.SYS_INOTIFY_INIT,
}
