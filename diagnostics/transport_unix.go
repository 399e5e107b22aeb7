//go:build !windows

package diagnostics

import (
	"context"
	"net"
)

// dialAddress connects to a runtime's Unix domain socket.
func dialAddress(ctx context.Context, addr string) (Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", addr)
	if err != nil {
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
