package monitor

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clrgo/clrevents/diagnostics"
	"github.com/clrgo/clrevents/profile"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the endpoints listed in the package doc. It applies no
// access control: mount it behind RequireToken (or, on a loopback
// listener without a token, LoopbackHost), or use ListenAndServe.
func (m *Monitor) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/processes", m.serveProcesses)
	mux.Handle("/metrics", promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/debug/pprof/profile", m.serveProfile(profile.CPU))
	mux.HandleFunc("/debug/pprof/allocs", m.serveProfile(profile.Alloc))
	mux.HandleFunc("/debug/pprof/mutex", m.serveProfile(profile.Contention))
	mux.HandleFunc("/trace", m.serveTrace)
	return getOnly(mux)
}

// getOnly refuses every method but GET (405) and requests with a body
// (400).
func getOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "only GET is served", http.StatusMethodNotAllowed)
			return
		}
		if r.ContentLength != 0 {
			http.Error(w, "requests have no body", http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// RequireToken serves h only to requests that carry
// "Authorization: Bearer TOKEN"; the others get 401. The comparison takes
// the same time whatever the token sent (crypto/subtle over SHA-256
// digests, so the length does not show either).
func RequireToken(token string, h http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 || !ok || token == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="clrtrace"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// LoopbackHost serves h only to requests whose Host is a loopback name
// or address: localhost, an IPv4 address in 127.0.0.0/8 or ::1, with or
// without a port. The others get 421 (Misdirected Request), naming the
// Host refused. It is the guard against DNS rebinding that a loopback
// listener without a token needs: a web page the user's browser loaded
// from attacker.example can make that name resolve to 127.0.0.1 and
// then read the answers (process command lines, traces) as its own; its
// requests still carry Host: attacker.example. ListenAndServe applies it
// when no token is required (a token guards against rebinding itself:
// the page cannot send it).
func LoopbackHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isLoopbackHost(r.Host) {
			http.Error(w, fmt.Sprintf("Host %q is not a loopback name or address: without a token only requests to localhost, 127.0.0.0/8 or ::1 are served (a guard against DNS rebinding)", r.Host), http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// isLoopbackHost reports whether a request's Host (host or host:port) is
// localhost or a loopback IP address.
func isLoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1] // [::1] without a port
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (m *Monitor) serveProcesses(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(m.Processes())
}

// window reads the pid and seconds parameters (seconds defaults to 30, as
// net/http/pprof's profile does, or to Options.MaxWindow when that is
// shorter).
func (m *Monitor) window(w http.ResponseWriter, r *http.Request) (pid int, d time.Duration, ok bool) {
	q := r.URL.Query()
	pid, err := strconv.Atoi(q.Get("pid"))
	if err != nil || pid <= 0 {
		http.Error(w, fmt.Sprintf("pid=%q: a process ID is required (GET /processes lists them)", q.Get("pid")), http.StatusBadRequest)
		return 0, 0, false
	}
	maxSecs := int(m.o.MaxWindow / time.Second) // at least 1 (New)
	secs := min(30, maxSecs)
	if s := q.Get("seconds"); s != "" {
		secs, err = strconv.Atoi(s)
		if err != nil || secs < 1 || secs > maxSecs {
			http.Error(w, fmt.Sprintf("seconds=%q: a whole number from 1 to %d", s, maxSecs), http.StatusBadRequest)
			return 0, 0, false
		}
	}
	return pid, time.Duration(secs) * time.Second, true
}

// windowError answers a window that did not start or failed before
// anything was written.
func windowError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrNotMonitored):
		code = http.StatusNotFound
	case errors.Is(err, ErrBusy), errors.Is(err, ErrNotAttached):
		code = http.StatusConflict
	}
	http.Error(w, oneLine(err.Error()), code)
}

func (m *Monitor) serveProfile(k profile.Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		pid, d, ok := m.window(w, r)
		if !ok {
			return
		}
		// The profile is built in memory, so that a failure is an HTTP
		// error rather than a cut body.
		var buf bytesBuffer
		if err := m.Profile(r.Context(), pid, k, d, &buf); err != nil {
			windowError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%d.pb.gz"`, k, pid))
		w.Write(buf.b)
	}
}

// bytesBuffer is the smallest io.Writer to memory.
type bytesBuffer struct{ b []byte }

func (b *bytesBuffer) Write(p []byte) (int, error) {
	b.b = append(b.b, p...)
	return len(p), nil
}

func (m *Monitor) serveTrace(w http.ResponseWriter, r *http.Request) {
	pid, d, ok := m.window(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	if _, err := diagnostics.CollectConfig(q.Get("profile"), q.Get("providers")); err != nil {
		http.Error(w, oneLine(err.Error()), http.StatusBadRequest)
		return
	}
	// The body starts with the first bytes of the stream: the errors a
	// window can have before then are answered as such.
	sw := &startWriter{w: w, rc: http.NewResponseController(w), stall: m.o.TraceStall, header: func() {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%d.nettrace"`, pid))
	}}
	// Once the request's context ends (the monitor stops, or the client
	// went away), a client that takes nothing for shutdownStall loses
	// the rest: one that stopped reading does not hold the shutdown for
	// the server's whole timeout, one that reads gets the window's end.
	stopShorten := context.AfterFunc(r.Context(), func() { sw.shorten(shutdownStall) })
	defer func() {
		stopShorten()
		sw.finish()
	}()
	err := m.Trace(r.Context(), pid, q.Get("profile"), q.Get("providers"), d, sw)
	switch {
	case err == nil:
	case !sw.started:
		windowError(w, err)
	default:
		// Too late for a status: abort the response, so that the
		// client sees a failure (its read of the body fails) and not a
		// body that ends as a trace cut short by its process's exit
		// does.
		m.logf("trace of process %d: %v: response aborted", pid, err)
		panic(http.ErrAbortHandler)
	}
}

// shutdownStall is how long a /trace client may take none of the bytes
// written to it once the monitor stops.
const shutdownStall = time.Second

// startWriter sets the headers before the first write and flushes each
// write, so that the trace streams. Each write must be taken by the
// client within stall (a write deadline set before each one, through
// http.ResponseController): a client that stops reading fails the write,
// and so the window, which frees the process's window slot instead of
// holding it for as long as the client stays connected. A client that
// reads, even slowly, gets the whole stream as long as it takes each
// write (at most 64 KiB, less what the socket buffers) within stall. A
// ResponseWriter without write deadlines (one that a caller's
// middleware wraps without Unwrap) writes without them.
type startWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	header  func()
	started bool

	mu    sync.Mutex // guards stall and done, and setting the deadline
	stall time.Duration
	done  bool // the handler has returned: the connection is no longer the window's
}

func (s *startWriter) Write(p []byte) (int, error) {
	if !s.started {
		s.started = true
		s.header()
	}
	s.mu.Lock()
	stall := s.stall
	s.rc.SetWriteDeadline(time.Now().Add(stall))
	s.mu.Unlock()
	n, err := s.w.Write(p)
	if err == nil {
		if err = s.rc.Flush(); errors.Is(err, http.ErrNotSupported) {
			err = nil
		}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("the client took none of the trace for %v: %w", stall, err)
	}
	return n, err
}

// shorten bounds the stall to d, from now on, the write under way
// included.
func (s *startWriter) shorten(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.stall = min(s.stall, d)
	s.rc.SetWriteDeadline(time.Now().Add(s.stall))
}

// finish ends the window's use of the connection: no deadline is set
// after it (the server clears the deadline for the connection's next
// request once the handler returns).
func (s *startWriter) finish() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}

// Access is how ListenAndServe lets requests in.
type Access struct {
	// Token, when not "", is required of every request as
	// "Authorization: Bearer TOKEN". A listen address that is not
	// loopback requires one.
	Token string
	// CertFile and KeyFile, when both given, serve HTTPS.
	CertFile, KeyFile string
}

// logWriter sends the HTTP server's own messages (TLS handshake
// failures, …) to Options.Logf.
type logWriter struct{ m *Monitor }

func (w logWriter) Write(p []byte) (int, error) {
	w.m.logf("%s", strings.TrimSpace(string(p)))
	return len(p), nil
}

// ErrNeedToken refuses a listen address beyond loopback without a token.
var ErrNeedToken = errors.New("listening beyond loopback needs a token (-token-file): anyone who can reach the port could trace the processes")

// IsLoopback reports whether a listen address (host:port) is reachable
// from this host only: a loopback IP or "localhost". An empty host, which
// listens on every interface, is not.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ListenAndServe runs m (Run) and serves its Handler on addr until ctx
// ends: loopback only unless a.Token is set (ErrNeedToken otherwise),
// with the token required when set, and without a token only to
// requests whose Host is a loopback name or address (LoopbackHost: 421
// otherwise, against DNS rebinding), over TLS when a.CertFile and
// a.KeyFile are. When ctx ends it stops accepting requests, ends the
// windows running, stops every session and returns nil. ready, when not
// nil, is called with the address listened on once requests are served.
func ListenAndServe(ctx context.Context, addr string, m *Monitor, a Access, ready func(net.Addr)) error {
	// An address that does not parse (no port: "127.0.0.1") is that
	// error, not one beyond loopback, which IsLoopback takes it for.
	if _, _, err := net.SplitHostPort(addr); err != nil {
		why := err.Error()
		if ae, ok := err.(*net.AddrError); ok {
			why = ae.Err
		}
		return fmt.Errorf("listen address %s: %s (host:port, as %s)", addr, why, DefaultListen)
	}
	if !IsLoopback(addr) && a.Token == "" {
		return fmt.Errorf("%s: %w", addr, ErrNeedToken)
	}
	if (a.CertFile == "") != (a.KeyFile == "") {
		return errors.New("TLS needs both a certificate and a key (Access.CertFile and Access.KeyFile)")
	}
	var tlsConfig *tls.Config
	if a.CertFile != "" {
		// Loaded before listening: a certificate that does not load
		// is an error before anything says it serves.
		cert, err := tls.LoadX509KeyPair(a.CertFile, a.KeyFile)
		if err != nil {
			return fmt.Errorf("TLS: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	h := m.Handler()
	if a.Token != "" {
		h = RequireToken(a.Token, h)
	} else {
		h = LoopbackHost(h)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, TLSConfig: tlsConfig,
		BaseContext: func(net.Listener) context.Context { return ctx },
		ErrorLog:    log.New(logWriter{m}, "", 0)}
	runDone := make(chan error, 1)
	go func() { runDone <- m.Run(ctx) }()
	serveDone := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			serveDone <- srv.ServeTLS(ln, "", "")
		} else {
			serveDone <- srv.Serve(ln)
		}
	}()
	if ready != nil {
		ready(ln.Addr())
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-serveDone:
		cancel()
	}
	// The windows end with ctx (their requests' base context); give their
	// answers a moment to go out.
	sc, scancel := context.WithTimeout(context.Background(), m.o.Drain+commandTimeout)
	srv.Shutdown(sc)
	scancel()
	runErr := <-runDone
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return runErr
}
