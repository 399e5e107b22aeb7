//go:build !windows

package diagnostics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
)

// dialAddress connects to a runtime's Unix domain socket. A socket file
// nothing listens on is one a runtime left when it exited (killed, it
// cannot remove it): that is ErrNoProcess.
func dialAddress(ctx context.Context, addr string) (Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", addr)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w: its runtime has exited, leaving its socket (%w)", ErrNoProcess, err)
		}
		return nil, err
	}
	return c, nil
}

// listenAddress listens on a Unix domain socket for reverse-mode runtimes.
func listenAddress(addr string) (net.Listener, error) {
	return net.Listen("unix", addr)
}

// interrupt ends a connection that a read may be blocked on.
func interrupt(c Conn) { c.Close() }
