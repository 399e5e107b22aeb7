package monitor

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultListen is where clrtrace serve listens by default (dotnet-monitor's
// port, on loopback).
const DefaultListen = "127.0.0.1:52323"

// Config is a collector as a command line sets it up (clrtrace serve's
// flags): where to listen, who may ask, and which processes.
type Config struct {
	Listen          string // host:port (DefaultListen)
	TokenFile       string // a file holding the bearer token, when not ""
	TLSCert, TLSKey string // certificate and key files, for HTTPS
	PIDs            PIDs   // only these processes, when not empty
	Poll            time.Duration
	Verbose         bool          // the runtime provider at Verbose (allocation ticks, JIT times)
	KeepExited      time.Duration // Options.KeepExited
}

// AddFlags defines -listen, -token-file, -tls-cert, -tls-key, -pid (one
// per process, repeatable), -poll, -verbose and -keep-exited on fs,
// setting c.
func (c *Config) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Listen, "listen", DefaultListen, "address to serve on; beyond loopback only with -token-file")
	fs.StringVar(&c.TokenFile, "token-file", "", "file holding the token requests must carry (Authorization: Bearer TOKEN)")
	fs.StringVar(&c.TLSCert, "tls-cert", "", "TLS certificate file (with -tls-key): serve HTTPS")
	fs.StringVar(&c.TLSKey, "tls-key", "", "TLS private key file")
	fs.Var(&c.PIDs, "pid", "monitor only this process (repeat for more); all .NET processes found when none")
	fs.DurationVar(&c.Poll, "poll", 2*time.Second, "how often to look for new processes (at least "+MinPoll.String()+")")
	fs.BoolVar(&c.Verbose, "verbose", false, "runtime events at Verbose: allocation ticks and JIT compile times (more overhead)")
	fs.DurationVar(&c.KeepExited, "keep-exited", 2*time.Minute, "how long an exited process's series stay in /metrics, for the scrapes after its exit (at least the scrape interval; negative: none)")
}

// MinPoll is the shortest -poll Config takes: a discovery pass reads
// every process's /proc entries (all of them without -pid).
const MinPoll = 100 * time.Millisecond

// Serve runs the collector until ctx ends (see ListenAndServe), logging
// with logf: attaches, detaches, failures, and the address served on. A
// Poll of 0 is the default (2 s); one below MinPoll, and TLS with only
// one of its two files, are errors naming the flag.
func (c *Config) Serve(ctx context.Context, logf func(format string, args ...any)) error {
	if c.Poll < 0 || c.Poll > 0 && c.Poll < MinPoll {
		return fmt.Errorf("-poll %v: at least %v (0 for the default, 2s)", c.Poll, MinPoll)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		if c.TLSCert == "" {
			return fmt.Errorf("-tls-key %s without -tls-cert: HTTPS needs both", c.TLSKey)
		}
		return fmt.Errorf("-tls-cert %s without -tls-key: HTTPS needs both", c.TLSCert)
	}
	var a Access
	if c.TokenFile != "" {
		b, err := os.ReadFile(c.TokenFile)
		if err != nil {
			return err
		}
		// The token is never written anywhere: errors name the file.
		if a.Token = strings.TrimSpace(string(b)); a.Token == "" || strings.ContainsAny(a.Token, " \t\r\n") {
			return fmt.Errorf("%s: the token must be one word, alone in the file", c.TokenFile)
		}
	}
	a.CertFile, a.KeyFile = c.TLSCert, c.TLSKey
	o := Options{PIDs: c.PIDs, Poll: c.Poll, Logf: logf, KeepExited: c.KeepExited}
	if c.Verbose {
		o.RuntimeLevel = 5
	}
	listen := c.Listen
	if listen == "" {
		listen = DefaultListen
	}
	scheme := "http"
	if a.CertFile != "" {
		scheme = "https"
	}
	return ListenAndServe(ctx, listen, New(o), a, func(addr net.Addr) {
		logf("serving %s://%s (/processes, /metrics, /debug/pprof/profile, /debug/pprof/allocs, /debug/pprof/mutex, /trace)", scheme, addr)
	})
}

// PIDs is a list of process IDs as a flag.Value: each -pid adds one.
type PIDs []int

// String returns the PIDs separated by commas.
func (p *PIDs) String() string {
	s := make([]string, len(*p))
	for i, pid := range *p {
		s[i] = strconv.Itoa(pid)
	}
	return strings.Join(s, ",")
}

// Set adds a PID (or several, separated by commas).
func (p *PIDs) Set(v string) error {
	for _, f := range strings.Split(v, ",") {
		pid, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || pid <= 0 {
			return errors.New("not a process ID: " + f)
		}
		*p = append(*p, pid)
	}
	return nil
}
