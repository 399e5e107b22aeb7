//go:build windows

package diagnostics

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

const pipePrefix = `\\.\pipe\`

// Find returns the named pipe of process pid, \\.\pipe\dotnet-diagnostic-PID.
func Find(pid int) (string, error) {
	if pid <= 0 {
		return "", fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	name := pipePrefix + "dotnet-diagnostic-" + strconv.Itoa(pid)
	if _, err := os.Stat(name); err != nil {
		return "", fmt.Errorf("process %d: %w; looked for %s", pid, ErrNoEndpoint, name)
	}
	return name, nil
}

// Processes lists the processes with a dotnet-diagnostic-PID named pipe.
func Processes() ([]Process, error) {
	ents, err := os.ReadDir(pipePrefix)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", pipePrefix, err)
	}
	var out []Process
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "dotnet-diagnostic-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(rest)
		if err != nil || pid <= 0 {
			continue
		}
		out = append(out, Process{PID: pid, Address: pipePrefix + e.Name()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}
