package diagnostics

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// procfs reads what discovery needs from a /proc tree; tests point it at
// a fake one.
type procfs struct {
	root string
	dirs *socketDirs // a discovery pass's directory listings; nil: none kept
}

var hostProc = procfs{root: "/proc"}

// Find returns the diagnostic socket of process pid. It looks where the
// runtime puts it: the process's TMPDIR (read from /proc/PID/environ;
// /tmp when unset), seen through /proc/PID/root so that processes in
// containers are found, under the PID the process has in its own PID
// namespace (the last NSpid of /proc/PID/status); then this process's
// TMPDIR and /tmp. A socket whose name's key is not the process's start
// time (field 22 of /proc/PID/stat, which the runtime puts there) is
// another process's of the same PID: one that ended, or a container's
// that shares the directory. The newest matching socket wins; one whose path
// through /proc/PID/root is longer than a Unix socket address holds (107
// bytes) is taken from the TMPDIR itself when the process shares this
// one's PID namespace.
func Find(pid int) (string, error) { return hostProc.find(pid) }

func (p procfs) find(pid int) (string, error) {
	if pid <= 0 {
		return "", fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	dir := filepath.Join(p.root, strconv.Itoa(pid))
	if _, err := os.Stat(dir); err != nil {
		// Not in our /proc (another PID namespace, or gone): a socket
		// under that PID in our TMPDIR is still worth a try.
		for _, d := range clientTempDirs() {
			if s := p.dirs.newest(d, pid, nil); s != "" {
				return s, nil
			}
		}
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("process %d: %w", pid, ErrNoProcess)
		}
		return "", fmt.Errorf("process %d: %w", pid, err)
	}
	var looked []string
	tmp := p.tmpDir(pid)
	nspid := p.nsPID(pid)
	// A socket of another start is another process's; /proc/PID/stat is
	// read only for a process that has a socket.
	var started uint64
	read := false
	start := func() uint64 {
		if !read {
			started, read = p.startTime(pid), true
		}
		return started
	}
	// Through the process's root: right inside a container, and the same
	// directory as the host's otherwise.
	inRoot := filepath.Join(dir, "root", tmp)
	long := p.dirs.newest(inRoot, nspid, start)
	if long != "" && len(long) <= maxSocketPath {
		return long, nil
	}
	looked = append(looked, inRoot)
	dirs := clientTempDirs()
	if nspid == pid {
		dirs = append([]string{tmp}, dirs...)
	}
	for _, d := range dirs {
		if s := p.dirs.newest(d, pid, start); s != "" && len(s) <= maxSocketPath {
			return s, nil
		}
		looked = append(looked, d)
	}
	if long != "" {
		// A socket path the runtime could bind, made too long for an
		// address by the /proc/PID/root prefix, and not reachable
		// without it.
		return "", fmt.Errorf("process %d: %w: its socket %s is %d bytes long through the process's root, more than the %d a Unix socket address holds", pid, ErrNoEndpoint, long, len(long), maxSocketPath)
	}
	return "", noEndpoint(pid, dedupe(looked))
}

// maxSocketPath is the longest path a Unix socket address holds on Linux
// (sun_path is 108 bytes, with its NUL).
const maxSocketPath = 107

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// tmpDir returns the TMPDIR in the process's environment, or /tmp.
func (p procfs) tmpDir(pid int) string {
	env, err := os.ReadFile(filepath.Join(p.root, strconv.Itoa(pid), "environ"))
	if err == nil {
		if v, ok := envValue(env, "TMPDIR"); ok && v != "" {
			return v
		}
	}
	return "/tmp"
}

// envValue finds key in a NUL-separated environment block.
func envValue(env []byte, key string) (string, bool) {
	for _, kv := range bytes.Split(env, []byte{0}) {
		if k, v, ok := bytes.Cut(kv, []byte{'='}); ok && string(k) == key {
			return string(v), true
		}
	}
	return "", false
}

// startTime returns the process's start time in clock ticks since boot
// (field 22 of /proc/PID/stat), the key the runtime puts in its socket's
// name; 0 when /proc does not say.
func (p procfs) startTime(pid int) uint64 {
	st, err := os.ReadFile(filepath.Join(p.root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	return parseStartTime(st)
}

// parseStartTime reads field 22 of a /proc/PID/stat line; the second
// field, the command in parentheses, may hold spaces and parentheses, so
// the fields are counted from the last ')'. 0 when it does not parse.
func parseStartTime(stat []byte) uint64 {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(stat[i+1:])) // fields 3 on
	if len(f) < 20 {
		return 0
	}
	n, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// nsPID returns the process's PID in its innermost PID namespace (the last
// NSpid field of /proc/PID/status), or pid when the kernel does not say.
func (p procfs) nsPID(pid int) int {
	st, err := os.ReadFile(filepath.Join(p.root, strconv.Itoa(pid), "status"))
	if err != nil {
		return pid
	}
	return parseNSpid(st, pid)
}

func parseNSpid(status []byte, pid int) int {
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return pid
			}
			if n, err := strconv.Atoi(f[len(f)-1]); err == nil && n > 0 {
				return n
			}
		}
	}
	return pid
}

// Processes lists the processes with a diagnostic endpoint that this user
// can see, by PID.
func Processes() ([]Process, error) { return hostProc.processes() }

func (p procfs) processes() ([]Process, error) {
	ents, err := os.ReadDir(p.root)
	if err != nil {
		return nil, err
	}
	p.dirs = &socketDirs{names: map[[2]uint64][]string{}} // each directory listed once in this pass
	var out []Process
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if addr, err := p.find(pid); err == nil {
			out = append(out, Process{PID: pid, Address: addr})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}
