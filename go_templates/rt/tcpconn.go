//go:build gocode_loopback

package rt

import (
	"errors"
	"io"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// A TCP connection to the controller without package net: a non-blocking socket handed to
// os.NewFile, which registers it with the runtime's poller, so reads and writes park the
// goroutine (not a thread: a program's parallel calls stay within its task limit) and
// deadlines work. Package net costs a third of a loopback program's link; everything used
// here is linked anyway (fmt imports os). Errors read as package net's do.

// connectLimit bounds waiting for a connection to the controller to be set up (on loopback it
// is set up or refused at once; a full accept queue is the one thing that makes it wait).
const connectLimit = 30 * time.Second

type tcpConn struct {
	f      *os.File
	local  string // "127.0.0.1:54321", for errors worded as package net's
	remote string
}

// dialTCP connects to addr, with TCP_NODELAY set as package net sets it.
func dialTCP(addr netip.AddrPort) (*tcpConn, error) {
	remote := addr.String()
	fail := func(call string, err error) error {
		return &opError{op: "dial", remote: remote, err: os.NewSyscallError(call, err)}
	}
	family, sa := syscall.AF_INET, syscall.Sockaddr(nil)
	if ip := addr.Addr(); ip.Is4() {
		sa = &syscall.SockaddrInet4{Port: int(addr.Port()), Addr: ip.As4()}
	} else {
		family, sa = syscall.AF_INET6, &syscall.SockaddrInet6{Port: int(addr.Port()), Addr: ip.As16()}
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fail("socket", err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err != nil {
		syscall.Close(fd)
		return nil, fail("setsockopt", err)
	}
	cerr := syscall.Connect(fd, sa)
	f := os.NewFile(uintptr(fd), "tcp") // non-blocking: pollable
	switch cerr {
	case nil, syscall.EISCONN:
	case syscall.EINPROGRESS, syscall.EALREADY, syscall.EINTR:
		if err := awaitConnected(f); err != nil {
			f.Close()
			return nil, fail("connect", err)
		}
	default:
		f.Close()
		return nil, fail("connect", cerr)
	}
	c := &tcpConn{f: f, remote: remote}
	if la, err := syscall.Getsockname(fd); err == nil {
		c.local = sockaddrString(la)
	}
	return c, nil
}

// awaitConnected waits for a connect in progress to finish: nil once connected, else why not.
func awaitConnected(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	if err := f.SetWriteDeadline(time.Now().Add(connectLimit)); err != nil {
		return err
	}
	var result error
	werr := rc.Write(func(fd uintptr) bool {
		// Asked again after each writability event: the pending error first (an event that came
		// before this wait began is not seen again), then whether a peer is there yet.
		soerr, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_ERROR)
		if err != nil {
			result = err
			return true
		}
		switch e := syscall.Errno(soerr); e {
		case 0, syscall.EISCONN:
		case syscall.EINPROGRESS, syscall.EALREADY, syscall.EINTR:
			return false
		default:
			result = e
			return true
		}
		if _, err := syscall.Getpeername(int(fd)); err == syscall.ENOTCONN {
			return false
		}
		return true
	})
	if werr != nil {
		if errors.Is(werr, os.ErrDeadlineExceeded) {
			return syscall.ETIMEDOUT
		}
		return werr
	}
	if result == nil {
		result = f.SetWriteDeadline(time.Time{})
	}
	return result
}

func (c *tcpConn) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	return n, c.wrap("read", err)
}

func (c *tcpConn) Write(p []byte) (int, error) {
	n, err := c.f.Write(p)
	return n, c.wrap("write", err)
}

func (c *tcpConn) Close() error { return c.f.Close() }

// idleOpen reports whether a connection that was idle is still open with nothing to read:
// a peek that does not wait, as net/http learns that its idle connections were closed. The
// peer's end of stream (its close, or this end's reads shut down), a reset, or bytes nobody
// asked for all make it unfit for a request.
func (c *tcpConn) idleOpen() bool {
	rc, err := c.f.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	var b [1]byte
	if err := rc.Control(func(fd uintptr) {
		for {
			_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			if err == syscall.EINTR {
				continue
			}
			open = err == syscall.EAGAIN
			return
		}
	}); err != nil {
		return false
	}
	return open
}

func (c *tcpConn) SetDeadline(t time.Time) error { return c.f.SetDeadline(t) }

// wrap words an I/O error as package net does: "read tcp 127.0.0.1:54321->127.0.0.1:8080:
// read: connection reset by peer". End of stream stays io.EOF.
func (c *tcpConn) wrap(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = os.NewSyscallError(op, errno)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = timeoutError{}
	}
	return &opError{op: op, local: c.local, remote: c.remote, err: err}
}

// An opError is worded as package net's *OpError.
type opError struct {
	op, local, remote string
	err               error
}

func (e *opError) Error() string {
	s := e.op + " tcp "
	if e.local != "" {
		s += e.local + "->"
	}
	return s + e.remote + ": " + e.err.Error()
}

func (e *opError) Unwrap() error { return e.err }

// timeoutError is package net's wording of a passed deadline; it matches os.ErrDeadlineExceeded.
type timeoutError struct{}

func (timeoutError) Error() string        { return "i/o timeout" }
func (timeoutError) Timeout() bool        { return true }
func (timeoutError) Is(target error) bool { return target == os.ErrDeadlineExceeded }

func sockaddrString(sa syscall.Sockaddr) string {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)).String()
	case *syscall.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port)).String()
	}
	return ""
}
