package trace

import "testing"

// TestCPUOfAnotherThread: in NetTrace V4 and V5 an event's processor is
// the capture thread's, the thread that wrote it. The .NET Core 3.0
// trace's 35,161 ThreadSample events are written by the sampler for the
// sampled threads: their processor is the sampler's, not the sampled
// thread's, so CPU is -1 (TraceEvent leaves it unset); the runtime's own
// events, each written by its thread, keep theirs.
func TestCPUOfAnotherThread(t *testing.T) {
	samples, own, ownKnown := 0, 0, 0
	for _, e := range openAll(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip") {
		switch {
		case e.Provider == "Microsoft-DotNETCore-SampleProfiler" && e.Name == "ThreadSample":
			samples++
			if e.CPU != -1 {
				t.Fatalf("ThreadSample of thread %d at offset %d: CPU %d, want -1 (the sampler's processor)", e.TID, e.Offset, e.CPU)
			}
		case e.Provider == "Microsoft-Windows-DotNETRuntime":
			own++
			if e.CPU >= 0 {
				ownKnown++
			}
		}
	}
	if samples != 35161 || own == 0 || ownKnown != own {
		t.Errorf("%d ThreadSample events (want 35,161); %d of %d runtime events with a processor (want all)", samples, ownKnown, own)
	}
}
