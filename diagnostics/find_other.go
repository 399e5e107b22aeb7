//go:build !linux && !windows

package diagnostics

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"syscall"
)

// Find returns the diagnostic socket of process pid: the newest
// dotnet-diagnostic-PID-KEY-socket in this process's TMPDIR or /tmp (on
// macOS the runtime uses its TMPDIR, which a user's processes share).
func Find(pid int) (string, error) {
	if pid <= 0 {
		return "", fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	dirs := clientTempDirs()
	for _, d := range dirs {
		if s := noListings.newest(d, pid, nil); s != "" {
			return s, nil
		}
	}
	if !alive(pid) {
		return "", fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	return "", noEndpoint(pid, dirs)
}

// noListings reads a directory each time it is asked.
var noListings *socketDirs

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Processes lists the processes with a diagnostic socket in this process's
// TMPDIR or /tmp, by PID.
func Processes() ([]Process, error) {
	seen := map[int]bool{}
	var out []Process
	for _, d := range clientTempDirs() {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			pid, ok := parseSocketName(e.Name())
			if !ok || seen[pid] || !alive(pid) {
				continue
			}
			if s := noListings.newest(d, pid, nil); s != "" {
				seen[pid] = true
				out = append(out, Process{PID: pid, Address: s})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}
