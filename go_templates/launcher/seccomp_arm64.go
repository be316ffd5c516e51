package main

import "golang.org/x/sys/unix"

const (
	auditArch     = unix.AUDIT_ARCH_AARCH64
	cloneFlagsArg = 0
)

var archPrologue = []unix.SockFilter{}

var archDenied = []uintptr{}
