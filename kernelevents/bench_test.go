package kernelevents

import (
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
)

// BenchmarkDecode decodes the events a CPU profile of an ETW log is made
// of: CPU samples, stack walks by key and by frames, thread rundowns.
func BenchmarkDecode(b *testing.B) {
	for _, ev := range []Event{
		&PerfInfoSampleV2{InstructionPointer: 0x7ff812345678, ThreadID: 4242, Count: 1},
		&StackWalkStackKeyUserV2{EventTimeStamp: 1 << 40, StackProcess: 4, StackThread: 8, StackKey: 0xffffc0001234},
		&StackWalkStackV2{EventTimeStamp: 1 << 40, StackProcess: 4, StackThread: 8, Stack: clrimpl.PointerArrayOf(8, make([]uint64, 32)...)},
		&ThreadDCStartV3{ProcessID: 4, ThreadID: 8, StackBase: 1 << 30},
	} {
		payload := ev.Encode(nil, 8)
		dst := ev.Info().New()
		b.Run(ev.Info().Name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(payload)))
			for b.Loop() {
				if _, err := dst.Decode(payload, 8); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
