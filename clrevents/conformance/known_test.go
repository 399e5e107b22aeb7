package conformance

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// known_failures.txt lists the mismatches the suite knows about, one per
// line: trace, event, field and reason, separated by tabs. The event is the
// manifest symbol; the field is a payload field name as TraceEvent or the
// manifest names it, or one of:
//
//	(trailing)  the payload has bytes past the template (structural check)
//	(count)     the per-type count differs from the baseline's
//	(unmatched) the baseline line matches no event of ours
//
// An entry belongs to the structural check when its field is (trailing) and
// to the baseline check otherwise. A check that ran over a trace fails on a
// mismatch that is not listed, and TestMain fails when a listed entry of a
// check that ran over its trace did not happen.
const knownFile = "known_failures.txt"

type knownKey struct{ trace, event, field string }

type knownSet struct {
	mu      sync.Mutex
	reasons map[knownKey]string
	line    map[knownKey]int
	hit     map[knownKey]bool
	covered map[string]bool // check + "\x00" + trace
	summary map[string]*traceSummary
}

// traceSummary is the per-trace table of the suite's note.
type traceSummary struct {
	Events, Types, Fields, Explained, Unexplained int
}

var known = loadKnown()

func loadKnown() *knownSet {
	k := &knownSet{reasons: map[knownKey]string{}, line: map[knownKey]int{}, hit: map[knownKey]bool{},
		covered: map[string]bool{}, summary: map[string]*traceSummary{}}
	f, err := os.Open(knownFile)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		w := strings.SplitN(line, "\t", 4)
		if len(w) != 4 || strings.TrimSpace(w[3]) == "" {
			panic(fmt.Sprintf("%s:%d: want trace<TAB>event<TAB>field<TAB>reason", knownFile, n))
		}
		kk := knownKey{w[0], w[1], w[2]}
		if _, dup := k.reasons[kk]; dup {
			panic(fmt.Sprintf("%s:%d: duplicate entry", knownFile, n))
		}
		k.reasons[kk] = w[3]
		k.line[kk] = n
	}
	return k
}

func checkOf(field string) string {
	if field == "(trailing)" {
		return "structural"
	}
	return "baseline"
}

// cover records that check ran over the whole trace.
func (k *knownSet) cover(check, trace string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.covered[check+"\x00"+trace] = true
}

func (k *knownSet) sum(trace string) *traceSummary {
	s := k.summary[trace]
	if s == nil {
		s = &traceSummary{}
		k.summary[trace] = s
	}
	return s
}

// mismatch reports a difference: logged when listed, a test error when not.
func (k *knownSet) mismatch(t testing.TB, trace, event, field, detail string) {
	t.Helper()
	kk := knownKey{trace, event, field}
	k.mu.Lock()
	reason, ok := k.reasons[kk]
	if ok {
		k.hit[kk] = true
		k.sum(trace).Explained++
	} else {
		k.sum(trace).Unexplained++
	}
	k.mu.Unlock()
	if ok {
		t.Logf("known (%s:%d): %s %s %s: %s [%s]", knownFile, k.line[kk], trace, event, field, detail, reason)
		return
	}
	t.Errorf("new mismatch: %s %s %s: %s\n\tlist it in %s as: %s\t%s\t%s\t<reason>", trace, event, field, detail, knownFile, trace, event, field)
}

// stale lists the entries of checks that ran which did not happen.
func (k *knownSet) stale() []string {
	var out []string
	for kk, reason := range k.reasons {
		if k.covered[checkOf(kk.field)+"\x00"+kk.trace] && !k.hit[kk] {
			out = append(out, fmt.Sprintf("%s:%d: %s %s %s now passes; remove the entry (%s)", knownFile, k.line[kk], kk.trace, kk.event, kk.field, reason))
		}
	}
	sort.Strings(out)
	return out
}

func TestMain(m *testing.M) {
	code := m.Run()
	if s := known.stale(); len(s) > 0 {
		fmt.Fprintln(os.Stderr, "FAIL: listed known failures that no longer happen:")
		for _, l := range s {
			fmt.Fprintln(os.Stderr, "\t"+l)
		}
		if code == 0 {
			code = 1
		}
	}
	if testing.Verbose() && len(known.summary) > 0 {
		var names []string
		for n := range known.summary {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Println("| trace | CLR events decoded | distinct types | baseline fields compared | mismatches explained | unexplained |")
		fmt.Println("|---|---:|---:|---:|---:|---:|")
		for _, n := range names {
			s := known.summary[n]
			fmt.Printf("| %s | %d | %d | %d | %d | %d |\n", n, s.Events, s.Types, s.Fields, s.Explained, s.Unexplained)
		}
	}
	os.Exit(code)
}
