package diagnostics

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/clrgo/clrevents/clrimpl"
)

// Advertisement is what a runtime sends first on each connection it opens
// to a reverse-mode diagnostic port.
type Advertisement struct {
	RuntimeCookie clrimpl.GUID // the runtime instance's cookie, as ProcessInfo gives it
	ProcessID     uint64       // in the runtime's own PID namespace
}

// ParseAdvertisement decodes an ADVR_V1 advertisement.
func ParseAdvertisement(b []byte) (Advertisement, error) {
	if len(b) < AdvertiseSize {
		return Advertisement{}, fmt.Errorf("%w: advertisement of %d bytes, want %d", ErrProtocol, len(b), AdvertiseSize)
	}
	if string(b[:8]) != AdvertiseMagic {
		return Advertisement{}, fmt.Errorf("%w: advertisement magic %q at byte 0, want %q", ErrProtocol, b[:8], AdvertiseMagic)
	}
	var a Advertisement
	copy(a.RuntimeCookie[:], b[8:24])
	a.ProcessID = binary.LittleEndian.Uint64(b[24:])
	return a, nil
}

// AppendAdvertisement appends an ADVR_V1 advertisement (what a runtime
// sends; for tests and simulations).
func AppendAdvertisement(dst []byte, a Advertisement) []byte {
	dst = append(dst, AdvertiseMagic...)
	dst = append(dst, a.RuntimeCookie[:]...)
	dst = binary.LittleEndian.AppendUint64(dst, a.ProcessID)
	return append(dst, 0, 0)
}

// Listener is a reverse-mode diagnostic port: runtimes started with
// DOTNET_DiagnosticPorts=PATH connect to it, advertise themselves, and
// reconnect after each command. Accept returns a Client per runtime; its
// commands use that runtime's next connection.
type Listener struct {
	ln   net.Listener
	addr string

	mu       sync.Mutex
	runtimes map[clrimpl.GUID]*reverseRuntime
	// fresh are the runtimes not yet accepted, in the order they first
	// connected (a runtime waiting at startup waits for Accept, so none
	// may be dropped); ready wakes an Accept when one is added.
	fresh []*Client
	ready chan struct{}
	err   error
	done  chan struct{}
}

type reverseRuntime struct {
	conns chan Conn
}

// maxQueued bounds the connections a runtime may have waiting.
const maxQueued = 8

// advertiseTimeout bounds how long a connection may take to advertise.
const advertiseTimeout = 10 * time.Second

// Listen creates a reverse-mode diagnostic port at addr (a Unix socket
// path; not yet supported on Windows).
func Listen(addr string) (*Listener, error) {
	ln, err := listenAddress(addr)
	if err != nil {
		return nil, err
	}
	l := &Listener{ln: ln, addr: addr, runtimes: map[clrimpl.GUID]*reverseRuntime{},
		ready: make(chan struct{}, 1), done: make(chan struct{})}
	go l.serve()
	return l, nil
}

// Addr returns the port's address, for DOTNET_DiagnosticPorts.
func (l *Listener) Addr() string { return l.addr }

func (l *Listener) serve() {
	defer close(l.done)
	for {
		c, err := l.ln.Accept()
		if err != nil {
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			return
		}
		go l.advertised(c)
	}
}

// advertised reads a connection's advertisement and queues it for its
// runtime; a new runtime is handed to Accept.
func (l *Listener) advertised(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(advertiseTimeout))
	var b [AdvertiseSize]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	a, err := ParseAdvertisement(b[:])
	if err != nil {
		c.Close()
		return
	}
	l.mu.Lock()
	rt := l.runtimes[a.RuntimeCookie]
	isNew := rt == nil
	if isNew {
		rt = &reverseRuntime{conns: make(chan Conn, maxQueued)}
		l.runtimes[a.RuntimeCookie] = rt
	}
	l.mu.Unlock()
	select {
	case rt.conns <- c:
	default:
		c.Close() // nobody is using this runtime's connections
	}
	if isNew {
		cl := &Client{pid: int(a.ProcessID), dial: func(ctx context.Context) (Conn, error) {
			select {
			case c := <-rt.conns:
				return c, nil
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for the runtime to connect to %s: %w", l.addr, ctx.Err())
			case <-l.done:
				return nil, fmt.Errorf("listener on %s closed", l.addr)
			}
		}}
		l.mu.Lock()
		l.fresh = append(l.fresh, cl)
		l.mu.Unlock()
		select {
		case l.ready <- struct{}{}:
		default: // an Accept will find it
		}
	}
}

// Accept waits for a runtime that has not connected before and returns a
// client for it. A runtime waiting at startup (suspend mode) goes on after
// Client.ResumeRuntime.
func (l *Listener) Accept(ctx context.Context) (*Client, error) {
	for {
		l.mu.Lock()
		if len(l.fresh) > 0 {
			c := l.fresh[0]
			l.fresh = l.fresh[1:]
			l.mu.Unlock()
			return c, nil
		}
		l.mu.Unlock()
		select {
		case <-l.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-l.done:
			l.mu.Lock()
			defer l.mu.Unlock()
			if errors.Is(l.err, net.ErrClosed) {
				return nil, fmt.Errorf("listener on %s closed", l.addr)
			}
			return nil, l.err
		}
	}
}

// Close stops listening and closes the connections waiting.
func (l *Listener) Close() error {
	err := l.ln.Close()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, rt := range l.runtimes {
	drain:
		for {
			select {
			case c := <-rt.conns:
				c.Close()
			default:
				break drain
			}
		}
	}
	return err
}
