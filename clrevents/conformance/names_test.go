package conformance

import (
	"io"
	"sort"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/internal/baseline"
	"github.com/clrgo/clrevents/trace"
)

// TestDisplayNames holds the names of the events of providers outside the
// CLR's (the kernel's, KernelTraceControl's, EventSources', TraceLogging's)
// to TraceEvent's: every name a baseline shows is some event's provider and
// trace.Event.DisplayName, what clrdump -event matches. (TestBaselines
// compares the CLR providers' events, names included, one by one;
// TestSelfDescribedBaselines the self-described events' counts.)
func TestDisplayNames(t *testing.T) {
	ran := 0
	for _, tf := range baselineTraces(t) {
		if tf.Baseline == "" {
			continue
		}
		ran++
		t.Run(tf.Name, func(t *testing.T) {
			var want []string
			if tf.ETL {
				bl, err := baseline.ParseFile(tf.Baseline)
				if err != nil {
					t.Fatal(err)
				}
				for _, b := range bl.Events {
					want = append(want, b.FullName())
				}
				for n := range bl.Counts {
					want = append(want, n)
				}
			} else {
				lines, err := parseEventPipeBaseline(tf.Baseline)
				if err != nil {
					t.Fatal(err)
				}
				for _, b := range lines {
					want = append(want, b.Provider+"/"+b.Name)
				}
			}
			r, err := trace.Open(tf.Path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got := map[string]bool{}
			for {
				e, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got[e.Provider()+"/"+e.DisplayName()] = true
			}
			sort.Strings(want)
			checked := 0
			for i, n := range want {
				if i > 0 && want[i-1] == n {
					continue
				}
				if p, _, _ := cutProvider(n); isCLR(p) {
					continue
				}
				checked++
				if !got[n] {
					t.Errorf("TraceEvent shows %s; no event of ours has that provider and DisplayName", n)
				}
			}
			t.Logf("%d names of providers outside the CLR's", checked)
		})
	}
	if ran == 0 {
		t.Fatal("no trace with a baseline")
	}
}

// cutProvider splits "Provider/Task/Opcode" at the provider, whose name has
// no slash.
func cutProvider(n string) (provider, name string, ok bool) {
	for i := 0; i < len(n); i++ {
		if n[i] == '/' {
			return n[:i], n[i+1:], true
		}
	}
	return n, "", false
}

// isCLR reports whether p is one of the CLR's providers, whose events the
// schema types.
func isCLR(p string) bool {
	_, ok := clrevents.ProviderByName(p)
	return ok
}
