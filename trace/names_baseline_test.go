package trace

import (
	"io"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/baseline"
	"github.com/clrgo/clrevents/kernelevents"
)

// TestKernelFileNamesBaseline: the 4.5.2 trace's disk I/Os and hard
// faults have the FileName TraceEvent's baseline prints, from the names
// its FileIO events (FileCreate, FileDelete, FileRundown) give their
// FileObjects, most of them in the rundown at the log's end (which
// holds from its start). TraceEvent turns the kernel's device paths into
// drive letters with the log's SysConfig/VolumeMapping events; the test
// does the same to ours, which FileName leaves as the kernel's.
func TestKernelFileNamesBaseline(t *testing.T) {
	r, bl := openNet452(t)
	type mapping struct{ nt, dos string }
	var volumes []mapping
	got := map[lineKey][]string{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := e.kernelValue().(*kernelevents.VolumeMappingV0); ok && e.et.ProviderGUID == sysConfigGUID {
			volumes = append(volumes, mapping{v.NtPath.String(), v.DosPath.String()})
			continue
		}
		name, ok := e.FileName()
		if !ok {
			continue
		}
		k := lineKey{baseline.FormatMSec(r.et.RelativeMSec(e.Timestamp())), e.Provider() + "/" + e.DisplayName(), len(e.Payload())}
		got[k] = append(got[k], name)
	}
	user := func(p string) string {
		for _, m := range volumes {
			if m.nt != "" && strings.HasPrefix(p, m.nt) {
				return m.dos + p[len(m.nt):]
			}
		}
		return p
	}
	lines := 0
	for i := range bl.Events {
		b := &bl.Events[i]
		want, ok := b.Field("FileName")
		cands, ours := got[lineKey{b.MSecText, b.FullName(), b.DataLen}]
		if !ok || !ours {
			continue
		}
		lines++
		match := false
		for _, c := range cands {
			match = match || baseline.SameValue(user(c), want)
		}
		if !match {
			t.Errorf("line %d: %s FileName %q (%q), baseline %s", b.Line, b.FullName(), cands[0], user(cands[0]), want)
		}
	}
	if lines < 15 {
		t.Fatalf("only %d baseline lines compared", lines)
	}
	t.Logf("%d baseline lines compared", lines)
}
