package trace

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/baseline"
)

// TestTraceSchemasBaseline: the 4.5.2 trace's events of providers outside
// the schema and the kernel, which it describes itself (KernelTraceControl's
// EventInfo events, the manifests of PerfView's and the framework's
// EventSources), have TraceEvent's provider and event names, TraceEvent's
// counts, and the field values TraceEvent prints.
func TestTraceSchemasBaseline(t *testing.T) {
	const dir = "../../shared/fixtures/traces/perfview/"
	if _, err := os.Stat(dir + "net.4.5.2.x86.etl.zip"); err != nil {
		t.Skip("shared traces absent (../shared beside the checkout)")
	}
	bl, err := baseline.ParseFile(dir + "net.4.5.2.x86.baseline.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir + "net.4.5.2.x86.etl.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	type key struct {
		ms, name string
		len      int
	}
	got := map[key][]map[string]any{}
	counts := map[string]int{}
	described := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		s := e.TraceSchema()
		if s == nil {
			continue
		}
		described++
		full := e.Provider() + "/" + e.Name()
		counts[full]++
		out, err := s.AppendJSON(nil, e.Payload(), e.PointerSize())
		if err != nil {
			t.Errorf("%s at offset %d: %v", full, e.Offset(), err)
			continue
		}
		d := json.NewDecoder(bytes.NewReader(out))
		d.UseNumber()
		var fields map[string]any
		if err := d.Decode(&fields); err != nil {
			t.Fatalf("%s: invalid JSON %s: %v", full, out, err)
		}
		k := key{baseline.FormatMSec(r.ETL().RelativeMSec(e.Timestamp())), full, len(e.Payload())}
		got[k] = append(got[k], fields)
	}
	// MSNT_SystemTrace is where TraceEvent puts two kernel events its
	// kernel parser leaves out (Image/KernelBase, SystemConfig/Platform):
	// kernel events, not described by the trace.
	outside := func(p string) bool {
		return p != "Windows Kernel" && p != "KernelTraceControl" && p != "MSNT_SystemTrace" &&
			!strings.HasPrefix(p, "Microsoft-Windows-DotNETRuntime")
	}
	lines, values := 0, 0
	for _, b := range bl.Events {
		if !outside(b.Provider) {
			continue
		}
		lines++
		cands := got[key{b.MSecText, b.FullName(), b.DataLen}]
		if len(cands) == 0 {
			t.Errorf("line %d: no described %s at %s ms with %d bytes", b.Line, b.FullName(), b.MSecText, b.DataLen)
			continue
		}
		// TraceEvent decodes Kernel-File with a parser of its own: other
		// field names, and paths with drive letters.
		if b.Provider == "Microsoft-Windows-Kernel-File" {
			continue
		}
		for _, f := range b.Fields {
			if f.Name == "PayloadLength" {
				continue // TraceEvent's, not the payload's
			}
			ok := false
			for _, c := range cands {
				v, has := c[f.Name]
				if !has {
					t.Errorf("line %d: %s has no field %s (ours: %v)", b.Line, b.FullName(), f.Name, c)
					continue
				}
				ok = ok || baseline.SameValue(v, f.Value)
			}
			if !ok {
				t.Errorf("line %d: %s %s = %v, baseline %s", b.Line, b.FullName(), f.Name, cands[0][f.Name], f.Value)
			}
			values++
		}
	}
	for name, n := range bl.Counts {
		if p, _, _ := strings.Cut(name, "/"); outside(p) && counts[name] != n {
			t.Errorf("%d %s events, baseline %d", counts[name], name, n)
		}
	}
	if lines < 50 || values < 100 {
		t.Fatalf("only %d baseline lines and %d values compared", lines, values)
	}
	t.Logf("%d described events; %d baseline lines, %d values compared", described, lines, values)
}
