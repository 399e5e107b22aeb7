package diagnostics

import (
	"errors"
)

// ErrNoProcess is wrapped when no process has the PID given.
var ErrNoProcess = errors.New("no such process")

// ErrNoEndpoint is wrapped when a process has no diagnostic endpoint: it
// is not a .NET process, its runtime is older than .NET Core 3.0, it runs
// with DOTNET_EnableDiagnostics=0, or its socket is where we cannot see.
var ErrNoEndpoint = errors.New("no diagnostic socket (not a .NET process, DOTNET_EnableDiagnostics=0, or not visible to this user)")

// Process is a .NET process with a diagnostic endpoint.
type Process struct {
	PID     int    // in this process's PID namespace
	Address string // the socket path or pipe name
}
