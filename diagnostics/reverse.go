package diagnostics

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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
//
// A runtime keeps one connection open, idle, for the next command. When
// that connection closes without a command, the runtime has exited: the
// Listener forgets it (a long-running listener holds nothing of the
// runtimes that came and went), and its Client's commands fail at once
// with an error wrapping ErrNoProcess. Should the same runtime connect
// again, Accept returns it again. A runtime that exits while none of its
// connections waits (in the moment between a command and its
// reconnection) is not seen to go: its entry stays, a few hundred bytes.
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
	// watchers counts the goroutines watching idle connections.
	watchers sync.WaitGroup
}

// reverseRuntime is one runtime's connections; idle and exited are
// guarded by the Listener's mu.
type reverseRuntime struct {
	cookie clrimpl.GUID
	idle   []*idleConn
	// avail wakes a command waiting for a connection when one is added;
	// gone is closed when the runtime has exited.
	avail  chan struct{}
	gone   chan struct{}
	exited bool
}

// idleConn is a connection a runtime opened for a command, watched while
// it waits: a read that returns is the runtime hanging up (or speaking
// out of turn), unless a command took the connection and cut the read
// short with a deadline. n and err are the read's, set before stopped is
// closed; taken is guarded by the Listener's mu.
type idleConn struct {
	c       net.Conn
	taken   bool
	n       int
	err     error
	stopped chan struct{}
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
	select {
	case <-l.done:
		// Closed: Close has closed the idle connections already.
		l.mu.Unlock()
		c.Close()
		return
	default:
	}
	rt := l.runtimes[a.RuntimeCookie]
	isNew := rt == nil
	if isNew {
		rt = &reverseRuntime{cookie: a.RuntimeCookie, avail: make(chan struct{}, 1), gone: make(chan struct{})}
		l.runtimes[a.RuntimeCookie] = rt
	}
	if len(rt.idle) >= maxQueued {
		l.mu.Unlock()
		c.Close() // nobody is using this runtime's connections
		return
	}
	ic := &idleConn{c: c, stopped: make(chan struct{})}
	rt.idle = append(rt.idle, ic)
	l.watchers.Add(1)
	l.mu.Unlock()
	go l.watch(rt, ic)
	signal(rt.avail)
	if isNew {
		cl := &Client{pid: int(a.ProcessID), dial: func(ctx context.Context) (Conn, error) {
			return l.take(ctx, rt, int(a.ProcessID))
		}}
		l.mu.Lock()
		l.fresh = append(l.fresh, cl)
		l.mu.Unlock()
		signal(l.ready)
	}
}

// signal wakes whoever waits on ch, a channel of one slot, without
// waiting itself: a slot already full will wake them.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// watch reads from an idle connection until the runtime hangs up or a
// command takes the connection (take cuts the read short). A runtime
// whose last idle connection hangs up has exited.
func (l *Listener) watch(rt *reverseRuntime, ic *idleConn) {
	defer l.watchers.Done()
	var b [1]byte
	n, err := ic.c.Read(b[:])
	l.mu.Lock()
	ic.n, ic.err = n, err
	taken := ic.taken
	if !taken {
		for i, o := range rt.idle {
			if o == ic {
				rt.idle = append(rt.idle[:i], rt.idle[i+1:]...)
				break
			}
		}
		if n == 0 && len(rt.idle) == 0 {
			l.exited(rt)
		}
	}
	l.mu.Unlock()
	if !taken {
		ic.c.Close()
	}
	close(ic.stopped)
}

// exited forgets a runtime whose connection closed; l.mu is held.
func (l *Listener) exited(rt *reverseRuntime) {
	if rt.exited {
		return
	}
	rt.exited = true
	close(rt.gone)
	if l.runtimes[rt.cookie] == rt {
		delete(l.runtimes, rt.cookie)
	}
}

// longAgo is a deadline in the past: setting it ends a read at once.
var longAgo = time.Unix(1, 0)

// take returns the runtime's next idle connection for a command, waiting
// for one if none is idle.
func (l *Listener) take(ctx context.Context, rt *reverseRuntime, pid int) (Conn, error) {
	for {
		l.mu.Lock()
		if len(rt.idle) > 0 {
			ic := rt.idle[0]
			rt.idle = rt.idle[1:]
			ic.taken = true
			more := len(rt.idle) > 0
			l.mu.Unlock()
			if more {
				signal(rt.avail) // another command may be waiting
			}
			ic.c.SetReadDeadline(longAgo)
			<-ic.stopped
			if ic.n == 0 && errors.Is(ic.err, os.ErrDeadlineExceeded) {
				ic.c.SetReadDeadline(time.Time{})
				return ic.c, nil
			}
			// The runtime hung up (or spoke out of turn) as the
			// connection was taken.
			ic.c.Close()
			if ic.n == 0 {
				l.mu.Lock()
				if len(rt.idle) == 0 {
					l.exited(rt)
				}
				l.mu.Unlock()
			}
			continue
		}
		exited := rt.exited
		l.mu.Unlock()
		if exited {
			return nil, fmt.Errorf("process %d: its runtime closed its connection to %s (it exited): %w", pid, l.addr, ErrNoProcess)
		}
		select {
		case <-rt.avail:
		case <-rt.gone:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the runtime to connect to %s: %w", l.addr, ctx.Err())
		case <-l.done:
			return nil, fmt.Errorf("listener on %s closed", l.addr)
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
	for _, rt := range l.runtimes {
		for _, ic := range rt.idle {
			ic.c.Close() // its watcher removes it
		}
	}
	l.mu.Unlock()
	l.watchers.Wait()
	return err
}
