package diagnostics

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/clrgo/clrevents/clrimpl"
)

// Conn is a connection to a runtime's diagnostics server: a Unix socket,
// a Windows named pipe, or a connection the runtime opened to a
// reverse-mode port.
type Conn interface {
	io.ReadWriteCloser
}

// deadliner is the part of net.Conn that bounds reads.
type deadliner interface {
	SetDeadline(time.Time) error
	SetReadDeadline(time.Time) error
}

// Client talks to one runtime. Each command uses a new connection, as the
// protocol requires; a Client is safe for concurrent use.
type Client struct {
	pid  int
	addr string
	dial func(ctx context.Context) (Conn, error)
}

// NewClient finds the diagnostic endpoint of process pid (see Find) and
// returns a client for it.
func NewClient(pid int) (*Client, error) {
	addr, err := Find(pid)
	if err != nil {
		return nil, err
	}
	return NewClientAddress(pid, addr), nil
}

// NewClientAddress returns a client for the endpoint at addr: a Unix
// socket path, or on Windows a named pipe (\\.\pipe\…). pid is what error
// messages name (0 if unknown).
func NewClientAddress(pid int, addr string) *Client {
	return &Client{pid: pid, addr: addr, dial: func(ctx context.Context) (Conn, error) { return dialAddress(ctx, addr) }}
}

// PID returns the process ID the client was made for.
func (c *Client) PID() int { return c.pid }

// Address returns the endpoint's address ("" for a reverse-mode client).
func (c *Client) Address() string { return c.addr }

// Error is a failed command: which process, which command, what happened.
type Error struct {
	PID     int     // the process (0 when unknown)
	Command Command // the command that failed
	// HRESULT is the runtime's error code, 0 when the failure was not an
	// error reply (a connection problem, a malformed reply).
	HRESULT HRESULT
	Err     error // what happened; errRuntime for an error reply
}

// Error formats as "process 123: CollectTracing2: the runtime answered
// error 0x80131385 (unknown command)".
func (e *Error) Error() string {
	who := "process ?"
	if e.PID != 0 {
		who = fmt.Sprintf("process %d", e.PID)
	}
	if e.HRESULT != 0 {
		return fmt.Sprintf("%s: %v: the runtime answered error %v", who, e.Command, e.HRESULT)
	}
	return fmt.Sprintf("%s: %v: %v", who, e.Command, e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// IsUnknownCommand reports whether err is a runtime's "unknown command"
// answer: the runtime is older than the command.
func IsUnknownCommand(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.HRESULT == EUnknownCommand
}

// errRuntime is wrapped by Error for error replies.
var errRuntime = errors.New("the runtime answered an error")

func (c *Client) fail(cmd Command, err error) error {
	return &Error{PID: c.pid, Command: cmd, Err: err}
}

// roundTrip sends one command on a new connection and reads the reply.
// On success the connection is returned open when keep is true (the
// command continues on it), else closed.
func (c *Client) roundTrip(ctx context.Context, cmd Command, payload []byte, keep bool) ([]byte, Conn, error) {
	conn, err := c.send(ctx, cmd, payload)
	if err != nil {
		return nil, nil, err
	}
	p, err := c.reply(ctx, cmd, conn)
	if err != nil {
		return nil, nil, err
	}
	if !keep {
		conn.Close()
		conn = nil
	}
	return p, conn, nil
}

// send opens a connection and writes one command on it.
func (c *Client) send(ctx context.Context, cmd Command, payload []byte) (Conn, error) {
	msg, err := EncodeMessage(cmd, payload)
	if err != nil {
		return nil, c.fail(cmd, err)
	}
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, c.fail(cmd, err)
	}
	stop := closeOnDone(ctx, conn)
	_, err = conn.Write(msg)
	if !stop() {
		err = ctx.Err()
	}
	if err != nil {
		conn.Close()
		return nil, c.fail(cmd, err)
	}
	return conn, nil
}

// reply reads the answer to cmd on conn, closing conn unless it is OK.
func (c *Client) reply(ctx context.Context, cmd Command, conn Conn) ([]byte, error) {
	stop := closeOnDone(ctx, conn)
	h, p, err := ReadMessage(conn)
	if !stop() {
		err = ctx.Err()
	}
	if err != nil {
		conn.Close()
		if err == io.EOF {
			err = errors.New("the runtime closed the connection without answering")
		}
		return nil, c.fail(cmd, err)
	}
	switch h.Command {
	case ReplyOK:
		return p, nil
	case ReplyError:
		conn.Close()
		if len(p) < 4 {
			return nil, c.fail(cmd, fmt.Errorf("%w: error reply with %d payload bytes, want 4", ErrProtocol, len(p)))
		}
		return nil, &Error{PID: c.pid, Command: cmd, HRESULT: HRESULT(binary.LittleEndian.Uint32(p)), Err: errRuntime}
	default:
		conn.Close()
		return nil, c.fail(cmd, fmt.Errorf("%w: reply is %v, want OK or Error", ErrProtocol, h.Command))
	}
}

// closeOnDone closes conn if ctx ends before the returned stop is called;
// stop reports whether the connection was left alone.
func closeOnDone(ctx context.Context, conn Conn) (stop func() bool) {
	if ctx.Done() == nil {
		return func() bool { return true }
	}
	if d, ok := conn.(deadliner); ok {
		if dl, ok := ctx.Deadline(); ok {
			d.SetDeadline(dl)
		}
	}
	af := context.AfterFunc(ctx, func() { interrupt(conn) })
	return func() bool {
		ok := af()
		if d, isD := conn.(deadliner); isD && ok {
			d.SetDeadline(time.Time{})
		}
		return ok
	}
}

// hresultReply checks a reply payload that is an int32 HRESULT (0: done).
func (c *Client) hresultReply(cmd Command, p []byte) error {
	if len(p) >= 4 {
		if hr := HRESULT(binary.LittleEndian.Uint32(p)); hr != 0 {
			return &Error{PID: c.pid, Command: cmd, HRESULT: hr, Err: errRuntime}
		}
	}
	return nil
}

// ProcessInfo is what a runtime says about its process.
type ProcessInfo struct {
	// Command is the command that answered: ProcessInfo3, 2 or 1.
	Command Command
	// ProcessID is the process ID in the process's own PID namespace.
	ProcessID     uint64
	RuntimeCookie clrimpl.GUID // unique per runtime instance, across PID namespaces
	CommandLine   string       // argv joined by spaces (GetCommandLineW on Windows)
	OS            string       // "Linux", "macOS", "Windows", "Unknown"
	Arch          string       // "x64", "x86", "arm64", "arm32", "Unknown"
	// The following come with ProcessInfo2 (.NET 6) and later.
	EntrypointAssembly string // the entry assembly's simple name
	ClrProductVersion  string // e.g. "8.0.11+…", prerelease labels included
	// RuntimeIdentifier comes with ProcessInfo3 (.NET 8) and later.
	RuntimeIdentifier string
}

// ProcessInfo asks ProcessInfo3, then ProcessInfo2, then ProcessInfo,
// going down when the runtime does not know the newer command.
func (c *Client) ProcessInfo(ctx context.Context) (*ProcessInfo, error) {
	for _, cmd := range []Command{CmdProcessInfo3, CmdProcessInfo2, CmdProcessInfo} {
		p, _, err := c.roundTrip(ctx, cmd, nil, false)
		if IsUnknownCommand(err) && cmd != CmdProcessInfo {
			continue
		}
		if err != nil {
			return nil, err
		}
		pi, err := ParseProcessInfo(cmd, p)
		if err != nil {
			return nil, c.fail(cmd, err)
		}
		return pi, nil
	}
	panic("unreachable")
}

// ParseProcessInfo decodes the reply payload of ProcessInfo, ProcessInfo2
// or ProcessInfo3. The layout is the .NET client's (the cookie follows
// the process ID; the protocol document's C structs list it last).
func ParseProcessInfo(cmd Command, p []byte) (*ProcessInfo, error) {
	d := &decoder{b: p}
	pi := &ProcessInfo{Command: cmd}
	version := uint32(0)
	if cmd == CmdProcessInfo3 {
		version = d.u32("version")
	}
	pi.ProcessID = d.u64("process ID")
	copy(pi.RuntimeCookie[:], d.take("runtime cookie", 16))
	pi.CommandLine = d.str("command line")
	pi.OS = d.str("OS")
	pi.Arch = d.str("architecture")
	if cmd != CmdProcessInfo {
		pi.EntrypointAssembly = d.str("entrypoint assembly")
		pi.ClrProductVersion = d.str("CLR product version")
	}
	if cmd == CmdProcessInfo3 && version >= 1 {
		pi.RuntimeIdentifier = d.str("runtime identifier")
	}
	return pi, d.err
}

// ResumeRuntime lets a runtime that waits at startup for a diagnostic
// port (DOTNET_DiagnosticPorts with suspend, or
// DOTNET_DefaultDiagnosticPortSuspend=1) go on. It is a no-op for a
// running runtime.
func (c *Client) ResumeRuntime(ctx context.Context) error {
	_, _, err := c.roundTrip(ctx, CmdResumeRuntime, nil, false)
	return err
}

// PerfMapType chooses what EnablePerfMap writes.
type PerfMapType uint32

// Perf map types (the runtime's PerfMapType).
const (
	PerfMapAll     PerfMapType = 1 // perf map and jitdump
	PerfMapJitDump PerfMapType = 2
	PerfMapPerfMap PerfMapType = 3
)

// EnablePerfMap makes the runtime write /tmp/perf-PID.map and/or jitdump
// files for perf (.NET 8 and later).
func (c *Client) EnablePerfMap(ctx context.Context, t PerfMapType) error {
	p, _, err := c.roundTrip(ctx, CmdEnablePerfMap, binary.LittleEndian.AppendUint32(nil, uint32(t)), false)
	if err != nil {
		return err
	}
	return c.hresultReply(CmdEnablePerfMap, p)
}

// DisablePerfMap stops the perf map and jitdump files (.NET 8 and later).
func (c *Client) DisablePerfMap(ctx context.Context) error {
	p, _, err := c.roundTrip(ctx, CmdDisablePerfMap, nil, false)
	if err != nil {
		return err
	}
	return c.hresultReply(CmdDisablePerfMap, p)
}

// SetEnvironmentVariable sets an environment variable in the process
// (.NET 6 and later).
func (c *Client) SetEnvironmentVariable(ctx context.Context, name, value string) error {
	p, _, err := c.roundTrip(ctx, CmdSetEnvironmentVariable, AppendString(AppendString(nil, name), value), false)
	if err != nil {
		return err
	}
	return c.hresultReply(CmdSetEnvironmentVariable, p)
}

// StopTracing stops session id and waits for the runtime's answer. The
// runtime answers only once it has ended the session: written the rest
// of the trace, rundown included, into the session's connection and
// closed it. Until then that stream must be read (from another
// goroutine), or the answer cannot come before ctx ends. Session.Stop
// does not wait for the answer.
func (c *Client) StopTracing(ctx context.Context, id uint64) error {
	_, _, err := c.roundTrip(ctx, CmdStopTracing, binary.LittleEndian.AppendUint64(nil, id), false)
	return err
}

// StartSession starts an EventPipe session with the lowest CollectTracing
// version that expresses cfg exactly, and when the runtime does not know
// that version (error 0x80131385), goes down one version at a time with
// the closest request the older version can express (Session.Refused and
// Session.Approximations say what was lost). The session's trace stream is read from the
// Session.
func (c *Client) StartSession(ctx context.Context, cfg SessionConfig) (*Session, error) {
	v := cfg.MinVersion()
	var tried []string
	for {
		payload, err := EncodeCollectTracing(v, &cfg)
		if err != nil {
			return nil, c.fail(CollectTracingCommand(v), err)
		}
		p, conn, err := c.roundTrip(ctx, CollectTracingCommand(v), payload, true)
		if IsUnknownCommand(err) && v > 1 {
			tried = append(tried, CollectTracingCommand(v).String())
			v--
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(p) < 8 {
			conn.Close()
			return nil, c.fail(CollectTracingCommand(v), fmt.Errorf("%w: reply payload of %d bytes, want an 8-byte session ID", ErrProtocol, len(p)))
		}
		s := &Session{
			ID: binary.LittleEndian.Uint64(p), Version: v, Refused: tried,
			Approximations: cfg.Approximations(v), client: c, conn: conn,
		}
		return s, nil
	}
}

// Session is a running EventPipe session. Read yields its nettrace
// stream; pass the Session to trace.NewReader (or use Session.Reader) to
// decode it live, or copy it to a file.
type Session struct {
	// ID is the runtime's session ID.
	ID uint64
	// Version is the CollectTracing version that started the session.
	Version int
	// Refused lists the newer commands the runtime did not know.
	Refused []string
	// Approximations lists what the version used could not express of
	// the request (see SessionConfig.Approximations).
	Approximations []string

	client *Client
	conn   Conn

	mu       sync.Mutex
	stopped  bool
	read     int64
	stopConn Conn          // StopTracing's connection, until its answer
	stopDone chan struct{} // closed once the answer is read (or failed)
	stopErr  error         // the answer's error
}

// String says what was started, and what an older runtime could not take
// of the request: "session 0x1 started with CollectTracing2 (the runtime
// does not know CollectTracing3: stacks are collected)".
func (s *Session) String() string {
	msg := fmt.Sprintf("session %#x started with %v", s.ID, CollectTracingCommand(s.Version))
	if len(s.Refused) > 0 {
		msg += " (the runtime does not know " + strings.Join(s.Refused, ", ")
		if len(s.Approximations) > 0 {
			msg += ": " + strings.Join(s.Approximations, "; ")
		}
		msg += ")"
	}
	return msg
}

// Read reads the session's trace stream. It returns io.EOF when the
// runtime ends the stream: after a stop, once the rundown is written.
func (s *Session) Read(p []byte) (int, error) {
	n, err := s.conn.Read(p)
	s.mu.Lock()
	s.read += int64(n)
	s.mu.Unlock()
	if err != nil && err != io.EOF {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			err = fmt.Errorf("process %d: session %#x: %w: the stream did not end before the stop deadline (%d bytes read)", s.client.pid, s.ID, ErrDrainTimeout, s.BytesRead())
		} else if errors.Is(err, net.ErrClosed) {
			err = fmt.Errorf("process %d: session %#x: %w", s.client.pid, s.ID, err)
		}
	}
	return n, err
}

// BytesRead returns how many stream bytes have been read so far.
func (s *Session) BytesRead() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read
}

// ErrDrainTimeout is wrapped by a Read error when the stream did not end
// by the deadline Stop set.
var ErrDrainTimeout = errors.New("drain deadline passed")

// Stop asks the runtime to stop the session: it sends StopTracing on a
// new connection (once; later calls do nothing) and bounds what is left of
// the stream: reads of the session fail with ErrDrainTimeout if the
// runtime has not ended the stream (written its rundown) by drain after
// the stop. drain <= 0 leaves the stream unbounded.
//
// Stop returns once the command is sent, with the error of sending it
// (ctx bounds that). It does not wait for the runtime's answer: the
// runtime answers StopTracing only after it has written the rest of the
// stream and ended it, which it cannot do while nobody reads the stream.
// So a program may call Stop from the goroutine that reads the session
// and go on reading to io.EOF. WaitStop returns the answer.
func (s *Session) Stop(ctx context.Context, drain time.Duration) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	s.mu.Unlock()
	if drain > 0 {
		if d, ok := s.conn.(deadliner); !ok || d.SetReadDeadline(time.Now().Add(drain)) != nil {
			time.AfterFunc(drain, func() { interrupt(s.conn) })
		}
	}
	conn, err := s.client.send(ctx, CmdStopTracing, binary.LittleEndian.AppendUint64(nil, s.ID))
	if err != nil {
		return err
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.stopConn, s.stopDone = conn, done
	s.mu.Unlock()
	go func() {
		defer close(done)
		c := context.Background()
		if drain > 0 {
			// The answer comes once the stream has ended: within the
			// drain, or the stream is cut anyway.
			var cancel context.CancelFunc
			c, cancel = context.WithTimeout(c, drain+stopAnswerGrace)
			defer cancel()
		}
		_, err := s.client.reply(c, CmdStopTracing, conn)
		if err == nil {
			conn.Close()
		}
		s.mu.Lock()
		s.stopErr = err
		s.mu.Unlock()
	}()
	return nil
}

// stopAnswerGrace is how long after the drain deadline the answer to
// StopTracing is still waited for: the runtime sends it just after the
// stream's end.
const stopAnswerGrace = time.Second

// WaitStop waits for the runtime's answer to the StopTracing that Stop
// sent, and returns its error: nil when the runtime answered OK, which
// it does also for a session it does not have (it ended, or the ID is
// wrong: the stream then runs on to Stop's drain deadline,
// ErrDrainTimeout), or when Stop was not called or could not send the
// command (Stop returned that error). The runtime answers once it has ended the
// session's stream, so call WaitStop after reading the stream to its end
// (or from another goroutine than the reader); the wait is bounded by
// Stop's drain (a second more), and ends when the Session is closed.
func (s *Session) WaitStop() error {
	s.mu.Lock()
	done := s.stopDone
	s.mu.Unlock()
	if done == nil {
		return nil
	}
	<-done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopErr
}

// Close closes the session's connection (and StopTracing's, if its
// answer is still awaited). A runtime ends a session whose connection
// closes, without a rundown; Stop first to get one.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.stopConn != nil {
		select {
		case <-s.stopDone:
		default:
			interrupt(s.stopConn)
		}
	}
	s.mu.Unlock()
	return s.conn.Close()
}
