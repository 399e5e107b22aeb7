// Command paired times whole processes on a shared, noisy machine: it runs
// two or more commands in interleaved rounds (A B C, A B C, …, with the
// order rotated each round), so that a burst of load from elsewhere lands
// on every command alike, and reports for each command the median wall
// time and CPU time (user+system) and the median, over rounds, of its
// ratio to the first command in the same round.
//
//	go run ./bench/paired -n 21 -- 'clrdump -stats T' 'clrdump -stats -order file T'
//
// Each command is split on spaces (no shell); its output goes to
// /dev/null.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 15, "rounds")
	warm := flag.Int("w", 2, "warm-up rounds, not counted")
	flag.Parse()
	cmds := flag.Args()
	if len(cmds) < 2 {
		fmt.Fprintln(os.Stderr, "usage: paired [-n rounds] [-w warmup] CMD CMD...")
		os.Exit(2)
	}
	wall := make([][]float64, len(cmds))
	cpu := make([][]float64, len(cmds))
	ratio := make([][]float64, len(cmds))
	for round := -*warm; round < *n; round++ {
		w := make([]float64, len(cmds))
		c := make([]float64, len(cmds))
		for k := range cmds {
			i := (k + max(round, 0)) % len(cmds)
			w[i], c[i] = run(cmds[i])
		}
		if round < 0 {
			continue
		}
		for i := range cmds {
			wall[i] = append(wall[i], w[i])
			cpu[i] = append(cpu[i], c[i])
			ratio[i] = append(ratio[i], w[i]/w[0])
		}
	}
	for i, c := range cmds {
		fmt.Printf("%-70s wall %7.1f ms  cpu %7.1f ms  wall/first %.3f (q1 %.3f, q3 %.3f)\n",
			c, med(wall[i])*1e3, med(cpu[i])*1e3, med(ratio[i]), quart(ratio[i], 1), quart(ratio[i], 3))
	}
}

// run runs cmd once and returns its wall and CPU seconds.
func run(cmd string) (wall, cpu float64) {
	f := strings.Fields(cmd)
	c := exec.Command(f[0], f[1:]...)
	// To /dev/null, as a shell's > /dev/null: a Go writer would cost a
	// pipe and a copy in this process.
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "paired:", err)
		os.Exit(1)
	}
	defer null.Close()
	c.Stdout, c.Stderr = null, null
	t := time.Now()
	if err := c.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "paired: %s: %v\n", cmd, err)
		os.Exit(1)
	}
	wall = time.Since(t).Seconds()
	cpu = (c.ProcessState.UserTime() + c.ProcessState.SystemTime()).Seconds()
	return wall, cpu
}

func med(x []float64) float64 { return quart(x, 2) }

// quart returns the q-th quartile (q in 1..3) of x.
func quart(x []float64, q int) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[(len(s)-1)*q/4]
}
