// Command alternate compares two builds of the peer benchmark (for
// example the checkout before a change and after it): it runs them by
// turns, one round each (-rounds 1), n times, so that both see the same
// load, and prints for every row each build's median of its per-round
// ratios with the quartiles and extremes, and the median peak RSS of the
// Parquet rows.
//
//	go run ./alternate [-n 12] [-run REGEXP] 'BUILD [FLAGS]' 'BUILD [FLAGS]'
//
// Each build is a command line split on spaces: the harness binary and
// its flags, e.g. '/tmp/peer-old -root /tmp/old -shared /work/shared/fixtures/traces'.
// Build the old harness from a copy of bench/peer whose go.mod replaces
// github.com/clrgo/clrevents with the old checkout. Run it from
// bench/peer (the harness finds the peer module with go list there).
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var (
	n     = flag.Int("n", 12, "runs of each build")
	runRE = flag.String("run", ".", "the rows (the harness's -run)")
)

var (
	rowLine = regexp.MustCompile(`^\| (\S+) \| (\S+) \| .*? \| \*\*([\d.]+)\*\*`)
	rssLine = regexp.MustCompile(`^peak RSS, (\S+) \(median of \d+\): \S+ ([\d.]+) MiB, \S+ ([\d.]+) MiB`)
)

func main() {
	flag.Parse()
	builds := flag.Args()
	if len(builds) != 2 {
		fmt.Fprintln(os.Stderr, "usage: alternate [-n runs] [-run REGEXP] 'BUILD [FLAGS]' 'BUILD [FLAGS]'")
		os.Exit(2)
	}
	ratios := map[string][2][]float64{}
	rss := map[string][2][][2]float64{}
	var rows []string
	var loads []float64
	for r := range *n {
		for k := range 2 {
			b := (k + r) % 2
			loads = append(loads, load())
			args := append(strings.Fields(builds[b]), "-rounds", "1", "-run", *runRE)
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				fmt.Fprintf(os.Stderr, "alternate: %s: %v\n", builds[b], err)
				os.Exit(1)
			}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				if m := rowLine.FindStringSubmatch(sc.Text()); m != nil {
					key := m[1] + "/" + m[2]
					v, _ := strconv.ParseFloat(m[3], 64)
					x, ok := ratios[key]
					if !ok {
						rows = append(rows, key)
					}
					x[b] = append(x[b], v)
					ratios[key] = x
				}
				if m := rssLine.FindStringSubmatch(sc.Text()); m != nil {
					p, _ := strconv.ParseFloat(m[2], 64)
					j, _ := strconv.ParseFloat(m[3], 64)
					x := rss[m[1]]
					x[b] = append(x[b], [2]float64{p, j})
					rss[m[1]] = x
				}
			}
		}
		fmt.Fprintf(os.Stderr, "run %d of %d\n", r+1, *n)
	}
	l := quartiles(loads)
	fmt.Printf("# %d runs of each build, by turns; 1-minute load average at their starts %.2f–%.2f (median %.2f)\n", *n, l[0], l[4], l[2])
	fmt.Printf("# A: %s\n# B: %s\n\n", builds[0], builds[1])
	fmt.Println("| row | A: median (q1–q3; min–max) | B: median (q1–q3; min–max) |")
	fmt.Println("|---|---|---|")
	for _, key := range rows {
		fmt.Printf("| %s | %s | %s |\n", key, summary(ratios[key][0]), summary(ratios[key][1]))
	}
	keys := make([]string, 0, len(rss))
	for key := range rss {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		x := rss[key]
		for b := range 2 {
			var p, j []float64
			for _, v := range x[b] {
				p, j = append(p, v[0]), append(j, v[1])
			}
			if len(p) > 0 {
				mp, mj := quartiles(p)[2], quartiles(j)[2]
				fmt.Printf("\npeak RSS, %s, %c: parquet %.1f MiB, jsonl %.1f MiB (medians): %.2f", key, 'A'+b, mp, mj, mp/mj)
			}
		}
	}
	fmt.Println()
}

func summary(v []float64) string {
	if len(v) == 0 {
		return "–"
	}
	q := quartiles(v)
	return fmt.Sprintf("%.3f (%.3f–%.3f; %.3f–%.3f)", q[2], q[1], q[3], q[0], q[4])
}

// quartiles returns the minimum, quartiles and maximum of x (linear
// interpolation between order statistics).
func quartiles(x []float64) [5]float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	at := func(p float64) float64 {
		f := p * float64(len(s)-1)
		i := int(f)
		if i+1 >= len(s) {
			return s[len(s)-1]
		}
		return s[i] + (f-float64(i))*(s[i+1]-s[i])
	}
	if len(s) == 0 {
		return [5]float64{}
	}
	return [5]float64{at(0), at(0.25), at(0.5), at(0.75), at(1)}
}

func load() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
