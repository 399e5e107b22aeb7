package profile

import (
	"encoding/binary"
	"fmt"

	"github.com/clrgo/clrevents/trace"
)

// CPU in a universal trace: see the package doc.

const (
	universalSystem = "Universal.System"
	universalEvents = "Universal.Events"
)

// universalSampleTypes returns a universal CPU profile's values.
func universalSampleTypes() []ValueType {
	return []ValueType{{"samples", "count"}, {"cpu", "samples"}}
}

// universalEvent takes an event of no generated type: a universal trace's
// system events go to the map, its CPU samples to a CPU profile.
func (b *Builder) universalEvent(e *trace.Event) error {
	switch e.Provider() {
	case universalSystem:
		if b.o.Map != nil {
			return nil // the map is kept by its owner
		}
		return b.m.Add(e)
	case universalEvents:
		if b.o.Kind != CPU || e.Name() != "cpu" {
			return nil
		}
		v, n := binary.Uvarint(e.Payload())
		if n <= 0 {
			return fmt.Errorf("profile: %s/%s at offset %d: its Value (a varint) does not decode", e.Provider(), e.Name(), e.Offset())
		}
		pid := e.ProcessID()
		if !b.keep(pid) {
			b.leftOut(pid)
			return nil
		}
		if !b.universal {
			// The collector's samples, not the SampleProfiler's, make
			// the profile.
			b.universal = true
			for i := range b.raws.n {
				if b.raws.at(i).stack != takenBack {
					b.takeBack(i)
				}
			}
		}
		b.add(pid, e.ThreadID(), e.Timestamp(), e.Stack(), e.StackKey(), 1, int64(min(v, 1<<62)), 0)
	}
	return nil
}

// finishUniversal gives a profile of a universal trace's samples its
// value types and its processes' names.
func (b *Builder) finishUniversal(p *Profile) {
	if !b.universal {
		return
	}
	p.SampleTypes = universalSampleTypes()
	for pid, name := range b.m.UniversalProcessNames() {
		if p.ProcessNames == nil {
			p.ProcessNames = map[int64]string{}
		}
		if p.ProcessNames[pid] == "" {
			p.ProcessNames[pid] = name
		}
	}
}
