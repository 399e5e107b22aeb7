//go:build windows

package diagnostics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
)

// errorPipeBusy is ERROR_PIPE_BUSY: every instance of the pipe is in use.
const errorPipeBusy syscall.Errno = 231

// dialAddress opens a runtime's named pipe, retrying while every
// instance is busy (the runtime creates the next one after accepting).
func dialAddress(ctx context.Context, addr string) (Conn, error) {
	for {
		f, err := os.OpenFile(addr, os.O_RDWR, 0)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, errorPipeBusy) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// listenAddress: reverse mode on Windows needs server-side named pipes
// (CreateNamedPipe), which this package does not implement yet.
func listenAddress(addr string) (net.Listener, error) {
	return nil, fmt.Errorf("listening on %s: reverse-mode diagnostic ports are not supported on Windows yet", addr)
}

// interrupt ends a connection that a read may be blocked on. A pipe
// opened by os.OpenFile does synchronous I/O, which closing the handle
// does not cancel: CancelIoEx does, from any thread.
func interrupt(c Conn) {
	if f, ok := c.(*os.File); ok {
		syscall.CancelIoEx(syscall.Handle(f.Fd()), nil)
	}
	c.Close()
}
