//go:build !windows

package diagnostics

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

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
