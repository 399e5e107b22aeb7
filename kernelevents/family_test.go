package kernelevents

import (
	"testing"
)

var familySink uint64

// TestFamilyAccessors checks the families a reader of the kernel's events
// type-switches on: every version and opcode of a class in one case, a
// field some versions lack with its HasX, the kind telling the opcodes
// apart; and that reading them allocates nothing.
func TestFamilyAccessors(t *testing.T) {
	for _, c := range []struct {
		ev   Event
		kind string
	}{
		{&ThreadStartV3{ProcessID: 4, ThreadID: 8}, "ThreadStart"},
		{&ThreadDCStopV2{ProcessID: 4, ThreadID: 8}, "ThreadDCStop"},
		{&ProcessDefunctV3{ProcessID: 4, ParentID: 8}, "ProcessDefunct"},
		{&ProcessStartV4{ProcessID: 4, ParentID: 8, Flags: 2}, "ProcessStart"},
		{&ImageLoadV2{ProcessID: 4, ImageBase: 8}, "ImageLoad"},
		{&DiskIOReadV3{DiskNumber: 4, IssuingThreadId: 8}, "DiskIORead"},
		{&DiskIOWriteV2{DiskNumber: 4}, "DiskIOWrite"},
		{&StackWalkStackKeyUserV2{StackProcess: 4, StackThread: 8}, "StackWalkStackKeyUser"},
	} {
		var kind string
		var pid, other uint64
		var has bool
		allocs := testing.AllocsPerRun(10, func() {
			switch ev := c.ev.(type) {
			case ThreadEvent:
				f := ev.ThreadFields()
				kind, pid, other = f.Kind.String(), uint64(f.ProcessID), uint64(f.ThreadID)
			case ProcessEvent:
				f := ev.ProcessFields()
				kind, pid, other, has = f.Kind.String(), uint64(f.ProcessID), uint64(f.ParentID), f.HasFlags
			case ImageEvent:
				f := ev.ImageFields()
				kind, pid, other = f.Kind.String(), uint64(f.ProcessID), f.ImageBase
			case DiskIOEvent:
				f := ev.DiskIOFields()
				kind, pid, other, has = f.Kind.String(), uint64(f.DiskNumber), uint64(f.IssuingThreadId), f.HasIssuingThreadId
			case StackWalkKeyRefEvent:
				f := ev.StackWalkKeyRefFields()
				kind, pid, other = f.Kind.String(), uint64(f.StackProcess), uint64(f.StackThread)
			default:
				t.Fatalf("%T is in none of the families tested", ev)
			}
			familySink += pid + other
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per family accessor call", c.ev.Info().Name, allocs)
		}
		wantOther := uint64(8)
		if _, ok := c.ev.(*DiskIOWriteV2); ok {
			wantOther = 0
		}
		if kind != c.kind || pid != 4 || other != wantOther {
			t.Errorf("%s: kind %s, fields %d %d", c.ev.Info().Name, kind, pid, other)
		}
		switch c.ev.(type) {
		case *ProcessStartV4, *DiskIOReadV3:
			if !has {
				t.Errorf("%s: the field only newer versions have is not there", c.ev.Info().Name)
			}
		case *ProcessDefunctV3, *DiskIOWriteV2:
			if has {
				t.Errorf("%s: has a field its version lacks", c.ev.Info().Name)
			}
		}
	}
}
