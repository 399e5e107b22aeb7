package diagnostics

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoProcess is wrapped when no process has the PID given.
var ErrNoProcess = errors.New("no such process")

// ErrNoEndpoint is wrapped when a process has no diagnostic endpoint: it
// is not a .NET process, its runtime is older than .NET Core 3.0, it runs
// with DOTNET_EnableDiagnostics=0, or its socket is where we cannot see.
var ErrNoEndpoint = errors.New("no diagnostic socket (not a .NET process, DOTNET_EnableDiagnostics=0, or not visible to this user)")

// Process is a .NET process with a diagnostic endpoint.
type Process struct {
	PID     int
	Address string
}

// socketPrefix and socketSuffix frame the runtime's socket name,
// dotnet-diagnostic-{pid}-{disambiguation key}-socket.
const (
	socketPrefix = "dotnet-diagnostic-"
	socketSuffix = "-socket"
)

// parseSocketName returns the PID in a socket file name, or false.
func parseSocketName(name string) (int, bool) {
	if !strings.HasPrefix(name, socketPrefix) || !strings.HasSuffix(name, socketSuffix) {
		return 0, false
	}
	mid := name[len(socketPrefix) : len(name)-len(socketSuffix)]
	pidS, key, ok := strings.Cut(mid, "-")
	if !ok || key == "" {
		return 0, false
	}
	if _, err := strconv.ParseUint(key, 10, 64); err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(pidS)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// newestSocket returns the most recently modified socket of pid in dir
// (a runtime that restarted with the same PID leaves an older one), or
// "".
func newestSocket(dir string, pid int) string {
	matches, _ := filepath.Glob(filepath.Join(dir, socketPrefix+strconv.Itoa(pid)+"-*"+socketSuffix))
	best, bestT := "", int64(0)
	for _, m := range matches {
		if p, ok := parseSocketName(filepath.Base(m)); !ok || p != pid {
			continue
		}
		st, err := os.Stat(m)
		if err != nil || st.Mode()&os.ModeSocket == 0 {
			continue
		}
		if t := st.ModTime().UnixNano(); best == "" || t > bestT {
			best, bestT = m, t
		}
	}
	return best
}

// clientTempDirs are where the runtime's socket is looked for from this
// process's side: its TMPDIR (the .NET client's rule), then /tmp.
func clientTempDirs() []string {
	dirs := []string{os.TempDir()}
	if dirs[0] != "/tmp" {
		dirs = append(dirs, "/tmp")
	}
	return dirs
}

func noEndpoint(pid int, looked []string) error {
	return fmt.Errorf("process %d: %w; looked in %s", pid, ErrNoEndpoint, strings.Join(looked, ", "))
}
