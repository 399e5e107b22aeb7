// Package etltest builds small ETW logs for tests: the log header buffer
// of a real log, then one buffer of the events a test makes, so a test
// can feed exact kernel events through the front door (package trace)
// as a real log would bring them.
package etltest

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/etl"
)

var le = binary.LittleEndian

// bufferHeaderSize is the size of a buffer's header (WMI_BUFFER_HEADER).
const bufferHeaderSize = 72

// Log returns an ETW log made of the first buffer of real (a whole ETL
// file: its log header buffer, whose BuffersWritten is set to 2) and one
// buffer of processor 0 holding events, each padded to 8 bytes.
func Log(real []byte, events ...[]byte) ([]byte, error) {
	if len(real) < bufferHeaderSize {
		return nil, fmt.Errorf("etltest: %d bytes: too short for an ETL log", len(real))
	}
	size := int(le.Uint32(real))
	if size < bufferHeaderSize || size > len(real) {
		return nil, fmt.Errorf("etltest: first buffer of %d bytes in a %d-byte log", size, len(real))
	}
	hdr := bytes.Clone(real[:size])
	at, err := HeaderAt(hdr)
	if err != nil {
		return nil, err
	}
	le.PutUint32(hdr[at+36:], 2) // BuffersWritten: the header buffer and ours

	buf := make([]byte, bufferHeaderSize)
	for _, e := range events {
		buf = append(buf, e...)
		for len(buf)%8 != 0 {
			buf = append(buf, 0)
		}
	}
	used := len(buf)
	n := 4096
	for n < used {
		n *= 2
	}
	for len(buf) < n {
		buf = append(buf, 0xff)
	}
	le.PutUint32(buf[0:], uint32(len(buf)))
	le.PutUint32(buf[4:], uint32(used))
	le.PutUint16(buf[52:], etl.BufferFlagProcessorIndex)
	return append(hdr, buf...), nil
}

// System returns a kernel event of a 64-bit log with a compact system
// header: the class is the hook group, the opcode op.
func System(group, op, version uint8, tid, pid uint32, ts int64, payload []byte) []byte {
	b := make([]byte, 24, 24+len(payload))
	le.PutUint16(b[0:], uint16(version))
	b[2], b[3] = 4, 0xC0 // 64-bit compact header; a trace header, of a system event
	le.PutUint16(b[4:], uint16(24+len(payload)))
	le.PutUint16(b[6:], uint16(group)<<8|uint16(op))
	le.PutUint32(b[8:], tid)
	le.PutUint32(b[12:], pid)
	le.PutUint64(b[16:], uint64(ts))
	return append(b, payload...)
}

// Classic returns an event of a 64-bit log with a classic trace header
// (EVENT_TRACE_HEADER) that names its class by GUID, as a merge writes
// the SysConfig events: the class's opcode and version as given.
func Classic(class [16]byte, op, version uint8, tid, pid uint32, ts int64, payload []byte) []byte {
	b := make([]byte, 48, 48+len(payload))
	b[2], b[3] = 20, 0xC0 // a 64-bit full header; a trace header
	b[4], b[5] = op, 4    // Class.Type, Class.Level (Informational)
	le.PutUint16(b[6:], uint16(version))
	le.PutUint32(b[8:], tid)
	le.PutUint32(b[12:], pid)
	le.PutUint64(b[16:], uint64(ts))
	copy(b[24:40], class[:])
	b = append(b, payload...)
	le.PutUint16(b[0:], uint16(len(b)))
	return b
}

// Event returns an event of a 64-bit log with an EVENT_HEADER (a
// manifest-based provider's, such as the .NET runtime's): provider,
// event ID, version, opcode and task as given.
func Event(provider [16]byte, id uint16, version, opcode uint8, task uint16, tid, pid uint32, ts int64, payload []byte) []byte {
	b := make([]byte, 80, 80+len(payload))
	b[2], b[3] = 19, 0xC0 // a 64-bit EVENT_HEADER; a trace header, of an event trace
	le.PutUint16(b[4:], etl.Flag64BitHeader)
	le.PutUint32(b[8:], tid)
	le.PutUint32(b[12:], pid)
	le.PutUint64(b[16:], uint64(ts))
	copy(b[24:40], provider[:])
	le.PutUint16(b[40:], id)
	b[42] = version
	b[44] = 4 // Informational
	b[45] = opcode
	le.PutUint16(b[46:], task)
	b = append(b, payload...)
	le.PutUint16(b[0:], uint16(len(b)))
	return b
}

// Process returns an ETW kernel Process event (version 4) of a 64-bit
// log: op 1 is Process/Start, 2 Process/Stop, 3 DCStart; name is the
// executable's name.
func Process(op uint8, pid uint32, ts int64, name string) []byte {
	var p []byte
	p = le.AppendUint64(p, 0)   // UniqueProcessKey
	p = le.AppendUint32(p, pid) // ProcessId
	p = le.AppendUint32(p, 4)   // ParentId
	p = le.AppendUint32(p, 1)   // SessionId
	p = le.AppendUint32(p, 0)   // ExitStatus
	p = le.AppendUint64(p, 0)   // DirectoryTableBase
	p = le.AppendUint32(p, 0)   // Flags
	p = le.AppendUint32(p, 0)   // UserSID: none
	p = append(p, name+"\x00"...)
	p = append(p, 0, 0, 0, 0, 0, 0) // CommandLine, PackageFullName, ApplicationId: empty
	return System(0x03, op, 4, 0, 0, ts, p)
}

// Runtime returns ev, an event of the .NET runtime's providers, as an
// event of a 64-bit log on thread tid of process pid.
func Runtime(ev clrevents.Event, tid, pid uint32, ts int64) []byte {
	info := ev.Info()
	return Event(info.Provider.GUID(), info.ID, info.Version, uint8(info.Opcode), info.Task, tid, pid, ts, ev.Encode(nil, 8))
}

// WithStack returns ev, an event Event made, with a 64-bit stack trace
// extended data item of frames, innermost first (as a provider enabled
// with stacks logs one; its MatchId 0).
func WithStack(ev []byte, frames ...uint64) []byte {
	item := make([]byte, 8, 16+8*len(frames))
	le.PutUint16(item[2:], etl.ExtStackTrace64)
	le.PutUint16(item[6:], uint16(8+8*len(frames)))
	item = le.AppendUint64(item, 0) // MatchId
	for _, f := range frames {
		item = le.AppendUint64(item, f)
	}
	out := append(append(append([]byte(nil), ev[:80]...), item...), ev[80:]...)
	le.PutUint16(out[0:], uint16(len(out)))
	le.PutUint16(out[4:], le.Uint16(out[4:])|etl.FlagExtendedInfo)
	return out
}

// Origin returns the raw timestamp of real's first event (its log header
// event): the time a test's events for Log count from, in the log's clock
// (100 ns units in the fixtures').
func Origin(real []byte) (int64, error) {
	r, err := etl.NewFileOrderReader(bytes.NewReader(real))
	if err != nil {
		return 0, fmt.Errorf("etltest: %w", err)
	}
	e, err := r.Next()
	if err != nil {
		return 0, fmt.Errorf("etltest: the log's first event: %w", err)
	}
	return e.Timestamp, nil
}

// HeaderAt returns where the log header event's payload (the
// TRACE_LOGFILE_HEADER: BuffersWritten at 36, EventsLost at 48, …) begins
// in log, for a test to change its fields.
func HeaderAt(log []byte) (int, error) {
	r, err := etl.NewFileOrderReader(bytes.NewReader(log))
	if err != nil {
		return 0, fmt.Errorf("etltest: %w", err)
	}
	first, err := r.Next()
	if err != nil {
		return 0, fmt.Errorf("etltest: the log header event: %w", err)
	}
	at := bytes.Index(log, first.Payload[:min(64, len(first.Payload))])
	if at < 0 || len(first.Payload) < 64 {
		return 0, fmt.Errorf("etltest: no log header payload in the first buffer")
	}
	return at, nil
}
