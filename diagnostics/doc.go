// Package diagnostics is the .NET diagnostics IPC client: it finds a
// running .NET process's diagnostic endpoint and speaks the runtime's
// Diagnostics IPC protocol to it, in pure Go, to start EventPipe sessions
// and read their events live, or to query and steer the process.
//
//	cl, err := diagnostics.NewClient(pid) // finds the socket (or pipe)
//	cfg, _ := diagnostics.Profile("cpu-sampling")
//	s, err := cl.StartSession(ctx, cfg)
//	r, err := s.Reader() // a trace.Reader over the live stream
//	for { e, err := r.Next(); … }  // until io.EOF, after s.Stop
//
// or copy the stream to a file as it comes, its framing checked on the
// way (Session.Copy: a stream that is not a trace, goes bad or ends early
// is a *StreamError that says what was seen and where).
//
// # Endpoints
//
// On Linux and macOS the runtime listens on a Unix socket named
// dotnet-diagnostic-PID-KEY-socket in its TMPDIR; Find reads the target's
// TMPDIR from /proc/PID/environ and looks through /proc/PID/root under the
// process's namespaced PID (NSpid), so processes in containers are found
// too, then in this process's TMPDIR and /tmp. On Windows it is the named
// pipe \\.\pipe\dotnet-diagnostic-PID. Listen opens a reverse-mode port
// for runtimes started with DOTNET_DiagnosticPorts (they connect, send an
// ADVR_V1 advertisement, and take one command per connection); a runtime
// waiting there at startup goes on after ResumeRuntime.
//
// # Commands
//
// Every command opens its own connection. ProcessInfo tries ProcessInfo3,
// 2, then 1. StartSession picks the lowest CollectTracing version (1–6)
// that expresses the SessionConfig and, when the runtime answers "unknown
// command" (0x80131385, an older runtime), goes down a version at a time,
// recording in the Session what the older request cannot express. The
// session's nettrace stream follows the reply on the same connection;
// Session.Stop sends StopTracing on a new one, after which the runtime
// writes the rundown and ends the stream (Stop bounds the wait); the
// runtime answers StopTracing only then, so Stop does not wait for the
// answer (Session.WaitStop does).
// Failures are *Error values that name the process, the command and the
// runtime's HRESULT.
//
// # Byte layouts
//
// Written from dotnet/diagnostics' documentation/design-docs/ipc-protocol.md
// and, where the two disagree, from Microsoft.Diagnostics.NETCore.Client's
// serializers, which is what runtimes accept: CollectTracing3 is command
// 0x0204 (the document's example header says 0x0203), CollectTracing4
// carries requestStackwalk after the rundown keyword (the document's
// struct leaves it out), ProcessInfo's runtime cookie follows the process
// ID (the document's C struct lists it last), and empty strings are sent
// as the client sends them, a count of 1 and a NUL.
package diagnostics
