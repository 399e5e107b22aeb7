package trace

import (
	"io"
	"path/filepath"
	"testing"

	_ "github.com/clrgo/clrevents/clrevents"
)

// TestDescriptorAgreesWithEvent: the Descriptor of every event of the
// repository's traces (and the shared ones, when they are beside the
// checkout) has the event's task and opcode (Event.Task, Event.Opcode),
// where before it lacked what the trace's metadata leaves out: the
// implied Start and Stop of an EventSource's RequestStart and
// RequestStop, the Task Parallel Library's declared tasks and opcodes,
// and an EventSource's ManifestData task in an ETW log. Copies are made
// once per description, task and opcode.
func TestDescriptorAgreesWithEvent(t *testing.T) {
	files, _ := filepath.Glob("../testdata/traces/*.zip")
	shared, _ := filepath.Glob("../../shared/fixtures/traces/*/*.zip")
	files = append(append(files, shared...), "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
		"../testdata/traces/universal-synthetic.nettrace")
	copies, described := 0, 0
	for _, f := range files {
		r, err := Open(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		bad := map[string]bool{}
		for {
			e, err := r.Next()
			if err != nil {
				if err != io.EOF {
					t.Logf("%s: %v", filepath.Base(f), err)
				}
				break
			}
			d := e.Descriptor()
			if d == nil {
				continue
			}
			described++
			if k := e.Provider() + "/" + e.Name(); (d.Task != e.Task() || uint8(d.Opcode) != e.Opcode()) && !bad[k] {
				bad[k] = true
				t.Errorf("%s: %s: Descriptor's task and opcode %d and %d, the event's %d and %d", filepath.Base(f), k, d.Task, d.Opcode, e.Task(), e.Opcode())
			}
			if e.Descriptor() != d {
				t.Fatalf("%s: two Descriptors for one event", filepath.Base(f))
			}
		}
		copies += len(r.agreed)
		r.Close()
	}
	t.Logf("%d events described, %d descriptions copied", described, copies)
	if copies < 2 || described < 100000 {
		t.Errorf("%d descriptions copied and %d events described: the traces lack what the test is about", copies, described)
	}
}
