// Command paired times whole processes on a shared, noisy machine: it runs
// two or more commands in interleaved rounds (A B C, A B C, …, with the
// order rotated each round), so that a burst of load from elsewhere lands
// on every command alike, and reports for each command the median wall
// time and CPU time (user+system) and the median, over rounds, of its
// ratio to the first command in the same round.
//
//	go run ./bench/paired -n 21 -- 'clrdump -stats T' 'clrdump -stats -order file T'
//	go run ./bench/paired -clean /tmp/ds -- 'clrdump -format jsonl T > /tmp/t.jsonl' 'clrdump -format parquet -o /tmp/ds T'
//
// Each command is split on spaces (no shell); its output goes to
// /dev/null, or to FILE when the command ends with "> FILE" (truncated
// each run). Besides wall time, each command's line gives the median over
// rounds of its CPU time's ratio to the first command's in the same round
// (cpu/first, with quartiles) and its median peak RSS (getrusage's
// maxrss of the child).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 15, "rounds")
	warm := flag.Int("w", 2, "warm-up rounds, not counted")
	var clean []string
	flag.Func("clean", "a `path` moved aside before each run and removed after the last (repeatable): a command's output directory", func(s string) error {
		clean = append(clean, s)
		return nil
	})
	flag.Parse()
	// What -clean moves aside is removed at the end, not between runs:
	// on ext4, the next run's mkdirs pay for directories deleted seconds
	// before (the inode allocator skips recently deleted inodes; 0.4 ms of
	// kernel time a directory here, against 0.03 ms), a cost of the
	// benchmark, not of the command.
	// (Beside the first path: a rename does not cross file systems.)
	var trash string
	if len(clean) > 0 {
		var err error
		if trash, err = os.MkdirTemp(filepath.Dir(clean[0]), "paired-trash-"); err != nil {
			fmt.Fprintln(os.Stderr, "paired:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(trash)
	}
	moved := 0
	cmds := flag.Args()
	if len(cmds) < 2 {
		fmt.Fprintln(os.Stderr, "usage: paired [-n rounds] [-w warmup] CMD CMD...")
		os.Exit(2)
	}
	wall := make([][]float64, len(cmds))
	cpu := make([][]float64, len(cmds))
	ratio := make([][]float64, len(cmds))
	cpuRatio := make([][]float64, len(cmds))
	rss := make([][]float64, len(cmds))
	for round := -*warm; round < *n; round++ {
		w := make([]float64, len(cmds))
		c := make([]float64, len(cmds))
		m := make([]float64, len(cmds))
		for k := range cmds {
			i := (k + max(round, 0)) % len(cmds)
			for _, p := range clean {
				moved++
				err := os.Rename(p, filepath.Join(trash, strconv.Itoa(moved)))
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					fmt.Fprintln(os.Stderr, "paired:", err)
					os.Exit(1)
				}
			}
			w[i], c[i], m[i] = run(cmds[i])
		}
		if round < 0 {
			continue
		}
		for i := range cmds {
			wall[i] = append(wall[i], w[i])
			cpu[i] = append(cpu[i], c[i])
			ratio[i] = append(ratio[i], w[i]/w[0])
			cpuRatio[i] = append(cpuRatio[i], c[i]/c[0])
			rss[i] = append(rss[i], m[i])
		}
	}
	for i, c := range cmds {
		fmt.Printf("%-70s wall %7.1f ms  cpu %7.1f ms  wall/first %.3f (q1 %.3f, q3 %.3f)  cpu/first %.3f (q1 %.3f, q3 %.3f, min %.3f, max %.3f)  maxrss %.1f MiB (min %.1f, max %.1f)\n",
			c, med(wall[i])*1e3, med(cpu[i])*1e3, med(ratio[i]), quart(ratio[i], 1), quart(ratio[i], 3),
			med(cpuRatio[i]), quart(cpuRatio[i], 1), quart(cpuRatio[i], 3), quart(cpuRatio[i], 0), quart(cpuRatio[i], 4),
			med(rss[i]), quart(rss[i], 0), quart(rss[i], 4))
	}
}

// run runs cmd once and returns its wall and CPU seconds and its peak
// RSS in MiB.
func run(cmd string) (wall, cpu, rss float64) {
	f := strings.Fields(cmd)
	out := os.DevNull
	if n := len(f); n >= 3 && f[n-2] == ">" {
		out, f = f[n-1], f[:n-2]
	}
	c := exec.Command(f[0], f[1:]...)
	// To /dev/null (or the file), as a shell's > /dev/null: a Go writer
	// would cost a pipe and a copy in this process.
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "paired:", err)
		os.Exit(1)
	}
	defer null.Close()
	stdout, err := os.Create(out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "paired:", err)
		os.Exit(1)
	}
	defer stdout.Close()
	c.Stdout, c.Stderr = stdout, null
	t := time.Now()
	if err := c.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "paired: %s: %v\n", cmd, err)
		os.Exit(1)
	}
	wall = time.Since(t).Seconds()
	cpu = (c.ProcessState.UserTime() + c.ProcessState.SystemTime()).Seconds()
	return wall, cpu, maxRSS(c.ProcessState)
}

func med(x []float64) float64 { return quart(x, 2) }

// quart returns the q-th quartile (q in 0..4: the least, the quartiles,
// the greatest) of x.
func quart(x []float64, q int) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[(len(s)-1)*q/4]
}
