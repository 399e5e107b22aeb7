// Package simruntime is a simulated .NET runtime diagnostics server for
// tests: it speaks the Diagnostics IPC protocol byte for byte as
// dotnet/diagnostics' ipc-protocol.md and the Microsoft.Diagnostics.NETCore.Client
// sources lay it out, and streams a real trace as a runtime does.
//
// It is written from the protocol, not from package diagnostics: it
// parses every request itself and answers malformed ones with the
// runtime's HRESULTs (bad encoding, unknown magic, unknown command), so
// that the client is tested against an independent reading of the
// layouts.
//
// A CollectTracing session writes the reply, then the first part of the
// trace (Config.Live bytes, in chunks), then waits until StopTracing for
// its session ID arrives on another connection, then writes the rest (the
// rundown) and closes the stream, as the runtime does. Config.Trace is
// streamed as it is, whatever it holds, so a test can send a cut or
// damaged trace, or bytes that are no trace at all; Config.ExitAfterLive
// and Config.StallAfterStop end a session as a dying or hung process does.
package simruntime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
)

// HRESULTs the runtime answers with.
const (
	EBadEncoding    = 0x80131384
	EUnknownCommand = 0x80131385
	EUnknownMagic   = 0x80131386
	EFail           = 0x80004005
)

// Config describes the simulated process and runtime.
type Config struct {
	PID          int      // the PID it reports and names its socket with
	Cookie       [16]byte // the runtime instance cookie
	CommandLine  string   // ProcessInfo's fields from here to RID
	OS, Arch     string
	Entrypoint   string
	ClrVersion   string
	RID          string
	DisambigKey  uint64        // the socket name's key; 0: SocketKey(PID)
	MaxCollect   int           // newest CollectTracing version known (1–6); 0: 6
	MaxInfo      int           // newest ProcessInfo version known (1–3); 0: 3
	Trace        []byte        // what a session streams
	Live         int           // bytes streamed before StopTracing (0: none; <0 or past the end: all)
	Chunk        int           // size of the writes before the stop; 0: 4096
	ChunkDelay   time.Duration // pause after each of those writes
	CollectError uint32        // answer every CollectTracing with this HRESULT
	// StopError answers every StopTracing with this HRESULT, after the
	// stream's end: a refusal no runtime of today sends (it answers OK
	// even for a session it does not have), for the client's error path.
	StopError      uint32
	RefuseStreams  bool // close session connections right after the reply
	StallAfterStop bool // after StopTracing, neither write the rest nor close
	// ExitAfterLive closes the stream right after the live part, without
	// waiting for StopTracing or writing the rest, as a process that exits
	// or crashes does. With a Trace cut short, the stream ends where the
	// cut is.
	ExitAfterLive bool
	// Stream, when not nil, writes each session's stream in place of
	// Trace (Live, Chunk, ChunkDelay, ExitAfterLive and StallAfterStop
	// are then unused): it is called after the reply with the parsed
	// request and writes to w until stop is closed (StopTracing for the
	// session), then writes what a runtime writes after a stop (the
	// rundown, the end of the stream) and returns. closed is closed when
	// the server closes (a process that exits): it must return then.
	// Workload.Stream is one.
	Stream func(req *Collect, w io.Writer, stop, closed <-chan struct{})
}

// liveSession is a running session: stop is closed by StopTracing, done when
// the session's stream has been written to its end and its connection
// closed.
type liveSession struct {
	stop, done chan struct{}
}

// Request is one request the server received, as parsed.
type Request struct {
	Set, ID uint8  // the command
	Payload []byte // as received
	// Collect is the parsed CollectTracing request (nil otherwise).
	Collect *Collect
	// Answer is the HRESULT sent back, 0 for OK.
	Answer uint32
}

// Collect is a parsed CollectTracing request.
type Collect struct {
	Version        int        // 1–6
	BufferMB       uint32     // circularBufferMB
	Format         uint32     // 0 NetPerf, 1 NetTrace
	RequestRundown bool       // versions 1–3 (1 always asks)
	RundownKeyword uint64     // versions 4–6
	Stackwalk      bool       // versions 3–6 (1–2 always walk)
	Providers      []Provider // in request order
	BufferMode     uint32     // version 6
}

// Provider is a parsed provider_config.
type Provider struct {
	Keywords      uint64   // the keyword mask
	Level         uint32   // 0–5
	Name, Args    string   // provider name and argument string
	HasFilter     bool     // versions 5–6: a filter other than (false, none)
	FilterEnable  bool     // the filter's enable flag
	FilterEventID []uint32 // the filter's event IDs
}

// Server is a running simulated runtime.
type Server struct {
	cfg  Config
	ln   net.Listener
	addr string

	mu       sync.Mutex
	reqs     []Request
	sessions map[uint64]*liveSession
	nextID   uint64
	resumed  bool
	env      map[string]string
	perfMap  uint32
	wg       sync.WaitGroup
	closed   chan struct{}
}

// SocketKey is the key a runtime of process pid puts in its socket's
// name: on Linux its start time, field 22 of /proc/PID/stat (discovery
// checks it), else 1234567 (a process /proc does not have, or another
// system, where discovery does not check it).
func SocketKey(pid int) uint64 {
	const other = 1234567
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return other
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return other
	}
	f := strings.Fields(string(stat[i+1:])) // fields 3 on
	if len(f) < 20 {
		return other
	}
	n, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil || n == 0 {
		return other
	}
	return n
}

// Start listens in dir, on the socket name the runtime would use
// (dotnet-diagnostic-PID-KEY-socket), and serves until Close.
func Start(dir string, cfg Config) (*Server, error) {
	if cfg.DisambigKey == 0 {
		cfg.DisambigKey = SocketKey(cfg.PID)
	}
	addr := filepath.Join(dir, fmt.Sprintf("dotnet-diagnostic-%d-%d-socket", cfg.PID, cfg.DisambigKey))
	ln, err := net.Listen("unix", addr)
	if err != nil {
		return nil, err
	}
	s := newServer(cfg)
	s.ln, s.addr = ln, addr
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.Serve(c)
			}()
		}
	}()
	return s, nil
}

func newServer(cfg Config) *Server {
	if cfg.MaxCollect == 0 {
		cfg.MaxCollect = 6
	}
	if cfg.MaxInfo == 0 {
		cfg.MaxInfo = 3
	}
	if cfg.Chunk <= 0 {
		cfg.Chunk = 4096
	}
	if cfg.Live < 0 || cfg.Live > len(cfg.Trace) {
		cfg.Live = len(cfg.Trace)
	}
	return &Server{cfg: cfg, sessions: map[uint64]*liveSession{}, nextID: 0x7f1e0001, env: map[string]string{}, closed: make(chan struct{})}
}

// Addr returns the socket path.
func (s *Server) Addr() string { return s.addr }

// Close stops listening, ends the sessions and waits for the connections.
func (s *Server) Close() error {
	var err error
	if s.ln != nil {
		err = s.ln.Close()
		os.Remove(s.addr)
	}
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	s.wg.Wait()
	return err
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Resumed reports whether ResumeRuntime was received.
func (s *Server) Resumed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resumed
}

// Env returns the variables SetEnvironmentVariable set.
func (s *Server) Env() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]string{}
	for k, v := range s.env {
		m[k] = v
	}
	return m
}

// PerfMap returns the perf map type last enabled (0: disabled).
func (s *Server) PerfMap() uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perfMap
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
}

// Advertise connects to a reverse-mode port at addr as a runtime does:
// each connection starts with an ADVR_V1 advertisement and serves one
// command; it reconnects until Close (or until the port goes away).
func (s *Server) Advertise(addr string) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			select {
			case <-s.closed:
				return
			default:
			}
			c, err := net.Dial("unix", addr)
			if err != nil {
				select {
				case <-s.closed:
					return
				case <-time.After(20 * time.Millisecond):
				}
				continue
			}
			adv := append([]byte("ADVR_V1\x00"), s.cfg.Cookie[:]...)
			adv = binary.LittleEndian.AppendUint64(adv, uint64(s.cfg.PID))
			adv = append(adv, 0, 0)
			if _, err := c.Write(adv); err != nil {
				c.Close()
				continue
			}
			s.Serve(c)
		}
	}()
}

// Serve answers one command on c and closes it (after the stream, for a
// session).
func (s *Server) Serve(c net.Conn) {
	defer c.Close()
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		select {
		case <-s.closed:
			c.Close()
		case <-stopWatch:
		}
	}()
	var hb [20]byte
	if _, err := io.ReadFull(c, hb[:]); err != nil {
		return
	}
	if string(hb[:14]) != "DOTNET_IPC_V1\x00" {
		s.record(Request{Answer: EUnknownMagic})
		writeError(c, EUnknownMagic)
		return
	}
	size := binary.LittleEndian.Uint16(hb[14:])
	set, id := hb[16], hb[17]
	reserved := binary.LittleEndian.Uint16(hb[18:])
	if size < 20 || reserved != 0 {
		s.record(Request{Set: set, ID: id, Answer: EBadEncoding})
		writeError(c, EBadEncoding)
		return
	}
	payload := make([]byte, int(size)-20)
	if _, err := io.ReadFull(c, payload); err != nil {
		return
	}
	req := Request{Set: set, ID: id, Payload: payload}
	answer := func(hr uint32) {
		req.Answer = hr
		s.record(req)
		writeError(c, hr)
	}
	switch {
	case set == 2 && id == 1: // StopTracing
		if len(payload) != 8 {
			answer(EBadEncoding)
			return
		}
		sid := binary.LittleEndian.Uint64(payload)
		if s.cfg.StopError != 0 {
			answer(s.cfg.StopError)
			return
		}
		s.mu.Lock()
		ss, ok := s.sessions[sid]
		if ok {
			delete(s.sessions, sid)
		}
		s.mu.Unlock()
		if !ok {
			// The runtime disables a session it does not have as a
			// no-op and answers OK all the same (ep_disable, then the
			// success reply, whatever the ID).
			s.record(req)
			writeOK(c, payload)
			return
		}
		close(ss.stop)
		s.record(req)
		// As the runtime's StopTracing does (ep_disable, then the reply):
		// the rest of the stream, the rundown, is written and the
		// session's connection closed before the answer, so a client that
		// does not read the stream meanwhile waits for an answer that
		// cannot come.
		select {
		case <-ss.done:
		case <-s.closed:
			return
		}
		writeOK(c, payload)
	case set == 2 && id >= 2 && id <= 7: // CollectTracing1–6
		v := int(id) - 1
		if v > s.cfg.MaxCollect {
			answer(EUnknownCommand)
			return
		}
		col, err := parseCollect(v, payload)
		if err != nil {
			answer(EBadEncoding)
			return
		}
		req.Collect = col
		if s.cfg.CollectError != 0 {
			answer(s.cfg.CollectError)
			return
		}
		s.mu.Lock()
		sid := s.nextID
		s.nextID++
		ss := &liveSession{stop: make(chan struct{}), done: make(chan struct{})}
		s.sessions[sid] = ss
		s.mu.Unlock()
		s.record(req)
		// The session ends, its connection closed, before StopTracing's
		// answer.
		defer close(ss.done)
		defer c.Close()
		if err := writeOK(c, binary.LittleEndian.AppendUint64(nil, sid)); err != nil || s.cfg.RefuseStreams {
			return
		}
		if s.cfg.Stream != nil {
			s.cfg.Stream(col, c, ss.stop, s.closed)
			return
		}
		s.stream(c, ss.stop)
	case set == 4 && (id == 0 || id == 4 || id == 8): // ProcessInfo, 2, 3
		v := map[uint8]int{0: 1, 4: 2, 8: 3}[id]
		if v > s.cfg.MaxInfo {
			answer(EUnknownCommand)
			return
		}
		if len(payload) != 0 {
			answer(EBadEncoding)
			return
		}
		s.record(req)
		writeOK(c, s.processInfo(v))
	case set == 4 && id == 1: // ResumeRuntime
		s.mu.Lock()
		s.resumed = true
		s.mu.Unlock()
		s.record(req)
		writeOK(c, nil)
	case set == 4 && id == 3: // SetEnvironmentVariable
		p := &parser{b: payload}
		name, value := p.str(), p.str()
		if p.bad || p.i != len(payload) {
			answer(EBadEncoding)
			return
		}
		s.mu.Lock()
		s.env[name] = value
		s.mu.Unlock()
		s.record(req)
		writeOK(c, []byte{0, 0, 0, 0})
	case set == 4 && id == 5: // EnablePerfMap
		if len(payload) != 4 {
			answer(EBadEncoding)
			return
		}
		s.mu.Lock()
		s.perfMap = binary.LittleEndian.Uint32(payload)
		s.mu.Unlock()
		s.record(req)
		writeOK(c, []byte{0, 0, 0, 0})
	case set == 4 && id == 6: // DisablePerfMap
		s.mu.Lock()
		s.perfMap = 0
		s.mu.Unlock()
		s.record(req)
		writeOK(c, []byte{0, 0, 0, 0})
	default:
		answer(EUnknownCommand)
	}
}

// stream writes the live part of the trace, waits for the stop, then the
// rest.
func (s *Server) stream(c net.Conn, stop chan struct{}) {
	t := s.cfg.Trace
	for off := 0; off < s.cfg.Live; {
		n := min(s.cfg.Chunk, s.cfg.Live-off)
		if _, err := c.Write(t[off : off+n]); err != nil {
			return
		}
		off += n
		if s.cfg.ChunkDelay > 0 {
			select {
			case <-time.After(s.cfg.ChunkDelay):
			case <-stop:
			case <-s.closed:
				return
			}
		}
	}
	if s.cfg.ExitAfterLive {
		return
	}
	select {
	case <-stop:
	case <-s.closed:
		return
	}
	if s.cfg.StallAfterStop {
		<-s.closed
		return
	}
	c.Write(t[s.cfg.Live:])
}

func (s *Server) processInfo(v int) []byte {
	var b []byte
	if v == 3 {
		b = binary.LittleEndian.AppendUint32(b, 1)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(s.cfg.PID))
	b = append(b, s.cfg.Cookie[:]...)
	b = appendStr(b, s.cfg.CommandLine)
	b = appendStr(b, s.cfg.OS)
	b = appendStr(b, s.cfg.Arch)
	if v >= 2 {
		b = appendStr(b, s.cfg.Entrypoint)
		b = appendStr(b, s.cfg.ClrVersion)
	}
	if v == 3 {
		b = appendStr(b, s.cfg.RID)
	}
	return b
}

func header(set, id uint8, n int) []byte {
	b := []byte("DOTNET_IPC_V1\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(20+n))
	return append(b, set, id, 0, 0)
}

func writeOK(c io.Writer, payload []byte) error {
	_, err := c.Write(append(header(0xFF, 0x00, len(payload)), payload...))
	return err
}

func writeError(c io.Writer, hr uint32) {
	c.Write(binary.LittleEndian.AppendUint32(header(0xFF, 0xFF, 4), hr))
}

func appendStr(b []byte, s string) []byte {
	u := utf16.Encode([]rune(s))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(u)+1))
	for _, x := range u {
		b = binary.LittleEndian.AppendUint16(b, x)
	}
	return append(b, 0, 0)
}

// parser reads a request payload; bad is set on any overrun.
type parser struct {
	b   []byte
	i   int
	bad bool
}

func (p *parser) n(k int) []byte {
	if p.bad || k > len(p.b)-p.i {
		p.bad = true
		return make([]byte, k)
	}
	r := p.b[p.i : p.i+k]
	p.i += k
	return r
}
func (p *parser) u8() uint8   { return p.n(1)[0] }
func (p *parser) u32() uint32 { return binary.LittleEndian.Uint32(p.n(4)) }
func (p *parser) u64() uint64 { return binary.LittleEndian.Uint64(p.n(8)) }

// str reads a string; it must end in NUL (a zero count is the empty
// string).
func (p *parser) str() string {
	n := p.u32()
	if p.bad || n == 0 {
		return ""
	}
	if uint64(n)*2 > uint64(len(p.b)-p.i) {
		p.bad = true
		return ""
	}
	raw := p.n(int(n) * 2)
	u := make([]uint16, n)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(raw[2*i:])
	}
	if u[n-1] != 0 {
		p.bad = true
		return ""
	}
	return string(utf16.Decode(u[:n-1]))
}

var errBad = errors.New("bad encoding")

// parseCollect parses CollectTracing version v's payload strictly.
func parseCollect(v int, b []byte) (*Collect, error) {
	p := &parser{b: b}
	c := &Collect{Version: v, RequestRundown: true, Stackwalk: true}
	if v >= 5 {
		if st := p.u32(); st != 0 {
			return nil, errBad // user_events sessions are not simulated
		}
	}
	c.BufferMB = p.u32()
	c.Format = p.u32()
	switch {
	case v >= 4:
		c.RundownKeyword = p.u64()
		c.RequestRundown = c.RundownKeyword != 0
	case v >= 2:
		c.RequestRundown = p.u8() != 0
	}
	if v >= 3 {
		c.Stackwalk = p.u8() != 0
	}
	n := p.u32()
	if p.bad || n == 0 || uint64(n)*20 > uint64(len(b)-p.i) {
		return nil, errBad
	}
	for range n {
		var pr Provider
		pr.Keywords = p.u64()
		pr.Level = p.u32()
		pr.Name = p.str()
		pr.Args = p.str()
		if v >= 5 {
			pr.FilterEnable = p.u8() != 0
			k := p.u32()
			if uint64(k)*4 > uint64(len(b)-p.i) {
				return nil, errBad
			}
			pr.HasFilter = pr.FilterEnable || k > 0
			for range k {
				pr.FilterEventID = append(pr.FilterEventID, p.u32())
			}
		}
		if pr.Name == "" || pr.Level > 5 {
			return nil, errBad // the runtime takes levels 0 (LogAlways) to 5 (Verbose)
		}
		c.Providers = append(c.Providers, pr)
	}
	if v >= 6 {
		c.BufferMode = p.u32()
	}
	if p.bad || p.i != len(b) || c.BufferMB == 0 || c.Format > 1 {
		return nil, errBad
	}
	return c, nil
}
