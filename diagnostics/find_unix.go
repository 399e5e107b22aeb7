//go:build !windows

package diagnostics

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// socketPrefix and socketSuffix frame the runtime's socket name,
// dotnet-diagnostic-{pid}-{disambiguation key}-socket; dotnet-dsrouter,
// which forwards the diagnostic connections of a runtime elsewhere (a
// device, a browser), names its socket
// dotnet-diagnostic-dsrouter-{pid}-{key}-socket with its own PID.
const (
	socketPrefix   = "dotnet-diagnostic-"
	socketSuffix   = "-socket"
	dsrouterPrefix = "dsrouter-"
)

// parseSocketName returns the PID in a socket file name, or false.
func parseSocketName(name string) (int, bool) {
	pid, _, _, ok := parseSocketKey(name)
	return pid, ok
}

// parseSocketKey returns the PID and the disambiguation key in a socket
// file name, or false. On Linux the key is the process's start time, in
// clock ticks since boot (field 22 of /proc/PID/stat), or 0 where the
// runtime could not read it. dsrouter is true for dotnet-dsrouter's
// socket.
func parseSocketKey(name string) (pid int, key uint64, dsrouter, ok bool) {
	if !strings.HasPrefix(name, socketPrefix) || !strings.HasSuffix(name, socketSuffix) {
		return 0, 0, false, false
	}
	mid := name[len(socketPrefix) : len(name)-len(socketSuffix)]
	mid, dsrouter = strings.CutPrefix(mid, dsrouterPrefix)
	pidS, keyS, ok := strings.Cut(mid, "-")
	if !ok || keyS == "" {
		return 0, 0, false, false
	}
	key, err := strconv.ParseUint(keyS, 10, 64)
	if err != nil {
		return 0, 0, false, false
	}
	pid, err = strconv.Atoi(pidS)
	if err != nil || pid <= 0 {
		return 0, 0, false, false
	}
	return pid, key, dsrouter, true
}

// socketDirs keeps the diagnostic sockets' names of each directory one
// discovery pass lists, by the directory's device and inode, so that a
// pass over every process lists a directory the processes share (/tmp,
// seen through each one's /proc/PID/root) once, not once a process. nil
// lists a directory each time it is asked.
type socketDirs struct {
	names map[[2]uint64][]string
}

// list returns the names in dir that begin as a diagnostic socket's.
func (c *socketDirs) list(dir string) []string {
	var key [2]uint64
	if c != nil {
		st, err := os.Stat(dir)
		if err != nil {
			return nil
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			key = [2]uint64{uint64(sys.Dev), uint64(sys.Ino)}
			if names, ok := c.names[key]; ok {
				return names
			}
		}
	}
	var names []string
	if f, err := os.Open(dir); err == nil {
		all, _ := f.Readdirnames(-1)
		f.Close()
		for _, n := range all {
			if strings.HasPrefix(n, socketPrefix) {
				names = append(names, n)
			}
		}
	}
	if c != nil && key != ([2]uint64{}) {
		c.names[key] = names
	}
	return names
}

// newest returns the most recently modified socket of pid in dir (a
// runtime that restarted with the same PID leaves an older one), or "".
// When start is not nil it gives the process's start time (Linux; 0 when
// unknown), asked only once a socket of pid is seen: a socket whose
// key is another start time is another process's, of the same PID: one
// that ended (the ID given again), or one in a container that shares the
// directory, whose PID in its own namespace is pid. A process that is
// dotnet-dsrouter has two sockets, its runtime's and the one it forwards
// a runtime's connections through: the newer wins, the forwarding one on
// a tie, as the .NET client's rule has it (its key is not checked: it is
// not the runtime's).
func (c *socketDirs) newest(dir string, pid int, start func() uint64) string {
	best, bestT := "", int64(0)
	for _, n := range c.list(dir) {
		p, key, dsrouter, ok := parseSocketKey(n)
		if !ok || p != pid {
			continue
		}
		if start != nil && !dsrouter && key != 0 {
			if s := start(); s != 0 && key != s {
				continue
			}
		}
		m := filepath.Join(dir, n)
		st, err := os.Stat(m)
		if err != nil || st.Mode()&os.ModeSocket == 0 {
			continue
		}
		if t := st.ModTime().UnixNano(); best == "" || t > bestT || t == bestT && dsrouter {
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
