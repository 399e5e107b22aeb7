package raw_test

import (
	"testing"

	"github.com/clrgo/clrevents/trace"
	"github.com/clrgo/clrevents/trace/raw"
)

// TestRaw: each format's records are reachable, and they are the ones
// behind the trace's events (the same offsets); the other format's are
// nil.
func TestRaw(t *testing.T) {
	for _, c := range []struct {
		path string
		etl  bool
	}{
		{"../../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip", false},
		{"../../testdata/traces/gcevents.etl.zip", true},
	} {
		r, err := trace.Open(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if (raw.ETLReader(r) != nil) != c.etl || (raw.NetTraceReader(r) != nil) == c.etl {
			t.Errorf("%s: readers %v %v", c.path, raw.ETLReader(r), raw.NetTraceReader(r))
		}
		n, meta := 0, 0
		for ; n < 200; n++ {
			e, err := r.Next()
			if err != nil {
				break
			}
			switch nt, et := raw.NetTrace(e), raw.ETL(e); {
			case c.etl && (et == nil || nt != nil || et.Offset != e.Offset()):
				t.Fatalf("%s: event at %d: records %v %v", c.path, e.Offset(), nt, et)
			case !c.etl && (nt == nil || et != nil || nt.Offset != e.Offset()):
				t.Fatalf("%s: event at %d: records %v %v", c.path, e.Offset(), nt, et)
			}
			if m := raw.Metadata(e); m != nil {
				meta++
				if m.EventID != e.ID() {
					t.Errorf("%s: event %d has the metadata of event %d", c.path, e.ID(), m.EventID)
				}
			}
		}
		if n == 0 || (meta > 0) == c.etl {
			t.Errorf("%s: %d events, %d with metadata", c.path, n, meta)
		}
		r.Close()
	}
}
