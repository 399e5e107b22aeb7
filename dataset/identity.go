package dataset

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"

	"github.com/clrgo/clrevents/trace"
)

// A trace is in a dataset once, whatever name it is given: a copy, or
// another spelling of its path, has another file name (FileName) but the
// same identity, a hash of what the trace says of itself (its format,
// start, clock, process and processors) and of its first events (their
// times, providers, IDs, versions and payloads). Each trace committed
// leaves a file named by its identity in IdentityDir, holding the name it
// was added by; a trace whose identity has one is not added again. A
// trace cut short is the same trace as the whole one when it holds their
// first events.
const (
	// IdentityDir is the folder of a dataset, beside its tables, that
	// holds a file per trace named by the trace's identity (engines skip
	// folders whose names begin with _).
	IdentityDir = "_clrevents_traces"
	// identityEvents is how many of its first events a trace's identity
	// hashes.
	identityEvents = 64
)

// identity accumulates a trace's identity.
type identity struct {
	h     hash.Hash
	buf   []byte
	final string // its file in the dataset, named by the identity, once made
}

// event adds an event to the identity.
func (id *identity) event(e *trace.Event) {
	if id.h == nil {
		id.h = fnv.New128a()
	}
	b := id.buf[:0]
	b = binary.LittleEndian.AppendUint64(b, uint64(e.Timestamp()))
	b = append(b, e.Provider()...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint16(b, e.ID())
	b = append(b, e.Version())
	b = binary.LittleEndian.AppendUint32(b, uint32(len(e.Payload())))
	b = append(b, e.Payload()...)
	id.buf = b
	id.h.Write(b)
}

// make ends the identity with what the trace says of itself, and returns
// an error when the dataset holds the trace already.
func (id *identity) make(dir string, info trace.Info) error {
	if id.h == nil {
		id.h = fnv.New128a()
	}
	b := id.buf[:0]
	b = append(b, info.Format.String()...)
	b = append(b, 0)
	for _, v := range []int64{int64(info.Version), info.StartTime.UnixNano(), info.ClockFrequency, info.SyncTimestamp,
		int64(info.PointerSize), info.ProcessID, int64(info.NumProcessors)} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	id.h.Write(b)
	id.final = filepath.Join(dir, IdentityDir, hex.EncodeToString(id.h.Sum(nil)))
	return id.check()
}

// check returns an error when the dataset holds the trace already.
func (id *identity) check() error {
	b, err := os.ReadFile(id.final)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	return fmt.Errorf("already in the dataset as %q: the same trace (its start, process and first events; %s)", strings.TrimSpace(string(b)), id.final)
}

// stage writes the identity's file into the staging folder, flushed to
// disk, and returns it as a file for the commit to move.
func (id *identity) stage(stage, name string) (*table, error) {
	tmp := filepath.Join(stage, "identity.tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(name + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return &table{final: id.final, tmp: tmp}, nil
}
