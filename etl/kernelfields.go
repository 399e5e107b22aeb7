package etl

import (
	"strconv"
	"time"

	"github.com/clrgo/clrevents/clrimpl"
)

// AppendKernelFields appends the payload of a kernel event that this
// package parses (PerfInfo Sample and CollectionStart, StackWalk, Thread,
// Image and Process events, and ImageID/DbgID_RSDS) as a JSON object (json) or as Name=value
// pairs, in the style of clrevents' AppendJSON and AppendText: numbers in
// decimal, addresses in hexadecimal ("0x…", quoted in JSON), strings
// quoted, stacks as JSON arrays of addresses. Field names are
// TraceEvent's. ok is false, and dst returned as it was, for any other
// event and for a payload that does not parse.
func (e *Event) AppendKernelFields(dst []byte, json bool) (out []byte, ok bool) {
	if out, ok := e.appendParsedFields(dst, json); ok {
		return out, true
	}
	s := KernelSchema(e)
	if s == nil {
		return dst, false
	}
	var err error
	if json {
		out, err = s.AppendJSON(dst, e.Payload, e.ptrSize())
	} else {
		out, err = s.AppendText(dst, e.Payload, e.ptrSize())
	}
	if err != nil {
		return dst, false
	}
	return out, true
}

// appendParsedFields appends the fields of the events the Parse functions
// read.
func (e *Event) appendParsedFields(dst []byte, json bool) (out []byte, ok bool) {
	w := fieldWriter{b: dst, json: json}
	switch e.HeaderKind {
	case SystemHeader, CompactSystemHeader, PerfInfoHeader:
	default:
		if e.ProviderGUID != ImageIDGUID || e.Opcode != OpDbgIDRSDS && e.Opcode != OpDbgIDILRSDS {
			return dst, false
		}
		d, err := ParseDbgID(e)
		if err != nil {
			return dst, false
		}
		w.open()
		w.hex("ImageBase", d.Base)
		w.uint("ProcessID", uint64(d.ProcessID))
		w.name("GuidSig")
		w.b = append(w.b, '"')
		w.b = d.GUID.AppendText(w.b)
		w.b = append(w.b, '"')
		w.uint("Age", uint64(d.Age))
		w.name("PDBFileName")
		w.b = clrimpl.AppendJSONString(w.b, d.PDBFileName)
		w.close()
		return w.b, true
	}
	w.open()
	switch group, op := e.KernelGroup(), e.Opcode; {
	case group == GroupPerfInfo && op == OpSampledProfile:
		s, err := ParseSampledProfile(e)
		if err != nil {
			return dst, false
		}
		w.hex("InstructionPointer", s.IP)
		w.uint("ThreadID", uint64(s.ThreadID))
		w.uint("Count", uint64(s.Count))
	case group == GroupPerfInfo && op == OpCollectionStart:
		s, err := ParseSampleInterval(e)
		if err != nil {
			return dst, false
		}
		w.uint("Source", uint64(s.Source))
		w.uint("NewInterval", uint64(s.NewInterval))
		w.uint("OldInterval", uint64(s.OldInterval))
	case group == GroupStackWalk && (op == OpStack || op == OpStackKeyKernel || op == OpStackKeyUser):
		s, err := ParseStackRef(e)
		if err != nil {
			return dst, false
		}
		w.uint("EventTimeStamp", uint64(s.EventTimestamp))
		w.uint("StackProcess", uint64(s.ProcessID))
		w.uint("StackThread", uint64(s.ThreadID))
		if s.HasFrames() {
			w.stack(s.frames, s.ps)
		} else {
			w.hex("StackKey", s.Key)
		}
	case group == GroupStackWalk && op >= OpKeyCreate && op <= OpKeyRundown:
		s, err := ParseStackDef(e)
		if err != nil {
			return dst, false
		}
		w.hex("StackKey", s.Key)
		w.stack(s.frames, s.ps)
	case group == GroupThread && op >= OpStart && op <= OpDCEnd:
		s, err := ParseThread(e)
		if err != nil {
			return dst, false
		}
		w.uint("ProcessID", uint64(s.ProcessID))
		w.uint("ThreadID", uint64(s.ThreadID))
	case group == GroupImage && (op == OpLoad || op >= OpEnd && op <= OpDCEnd):
		s, err := ParseImage(e)
		if err != nil {
			return dst, false
		}
		w.hex("ImageBase", s.Base)
		w.uint("ImageSize", s.Size)
		w.uint("ProcessID", uint64(s.ProcessID))
		w.uint("ImageChecksum", uint64(s.Checksum))
		w.uint("TimeDateStamp", uint64(s.TimeDateStamp))
		w.hex("DefaultBase", s.DefaultBase)
		w.name("FileName")
		w.b = s.FileName.AppendJSON(w.b)
	case group == GroupProcess && (op >= OpStart && op <= OpDCEnd || op == OpDefunct):
		s, err := ParseProcess(e)
		if err != nil {
			return dst, false
		}
		w.uint("ProcessID", uint64(s.ProcessID))
		w.uint("ParentID", uint64(s.ParentID))
		w.name("SessionID") // signed, as TraceEvent shows it (-1: none)
		w.b = strconv.AppendInt(w.b, int64(int32(s.SessionID)), 10)
		w.name("ExitStatus")
		w.b = strconv.AppendInt(w.b, int64(s.ExitStatus), 10)
		w.name("ImageFileName")
		w.b = clrimpl.AppendJSONString(w.b, s.ImageFileName)
		w.name("CommandLine")
		w.b = s.CommandLine.AppendJSON(w.b)
	case group == GroupEventTrace && op == 0:
		// The log header event: TRACE_LOGFILE_HEADER, as TraceEvent names
		// its fields.
		var h LogHeader
		if err := parseLogHeader(&h, e.Payload, e.ptrSize()); err != nil {
			return dst, false
		}
		for _, f := range []struct {
			name string
			v    uint32
		}{{"BufferSize", h.BufferSize}, {"Version", h.Version}, {"ProviderVersion", h.ProviderVersion},
			{"NumberOfProcessors", h.NumberOfProcessors}} {
			w.uint(f.name, uint64(f.v))
		}
		w.time("EndTime", h.EndTime)
		for _, f := range []struct {
			name string
			v    uint32
		}{{"TimerResolution", h.TimerResolution}, {"MaxFileSize", h.MaximumFileSize}, {"LogFileMode", h.LogFileMode},
			{"BuffersWritten", h.BuffersWritten}, {"StartBuffers", h.StartBuffers}, {"PointerSize", h.PointerSize},
			{"EventsLost", h.EventsLost}, {"CPUSpeed", h.CPUSpeedMHz}} {
			w.uint(f.name, uint64(f.v))
		}
		w.time("BootTime", h.BootTime)
		w.name("PerfFreq")
		w.b = strconv.AppendInt(w.b, h.PerfFreq, 10)
		w.time("StartTime", h.StartTime)
		w.uint("ReservedFlags", uint64(h.ClockType))
		w.uint("BuffersLost", uint64(h.BuffersLost))
		w.name("SessionName")
		w.b = clrimpl.AppendJSONString(w.b, h.SessionName)
		w.name("LogFileName")
		w.b = clrimpl.AppendJSONString(w.b, h.LogFileName)
		w.name("UtcOffsetMinutes")
		w.b = strconv.AppendInt(w.b, int64(h.UTCOffsetMinutes), 10)
	default:
		return dst, false
	}
	w.close()
	return w.b, true
}

// time writes t (UTC) as an RFC 3339 string, as the JSON lines write
// times.
func (w *fieldWriter) time(n string, t time.Time) {
	w.name(n)
	w.b = append(t.UTC().AppendFormat(append(w.b, '"'), time.RFC3339Nano), '"')
}

// fieldWriter writes fields as a JSON object or Name=value pairs.
type fieldWriter struct {
	b     []byte
	json  bool
	first bool
}

func (w *fieldWriter) open() {
	w.first = true
	if w.json {
		w.b = append(w.b, '{')
	}
}

func (w *fieldWriter) close() {
	if w.json {
		w.b = append(w.b, '}')
	}
}

func (w *fieldWriter) name(n string) {
	switch {
	case w.json && w.first:
		w.b = append(w.b, '"')
	case w.json:
		w.b = append(w.b, ',', '"')
	case !w.first:
		w.b = append(w.b, ' ')
	}
	w.first = false
	w.b = append(w.b, n...)
	if w.json {
		w.b = append(w.b, '"', ':')
	} else {
		w.b = append(w.b, '=')
	}
}

func (w *fieldWriter) uint(n string, v uint64) {
	w.name(n)
	w.b = strconv.AppendUint(w.b, v, 10)
}

func (w *fieldWriter) hex(n string, v uint64) {
	w.name(n)
	if w.json {
		w.b = append(w.b, '"')
	}
	w.b = clrimpl.AppendHex(w.b, v)
	if w.json {
		w.b = append(w.b, '"')
	}
}

// stack writes the addresses of frames (ps bytes each) as Stack, a JSON
// array of hexadecimal strings in both forms.
func (w *fieldWriter) stack(frames []byte, ps int) {
	w.name("Stack")
	w.b = append(w.b, '[')
	for off := 0; off+ps <= len(frames); off += ps {
		if off > 0 {
			w.b = append(w.b, ',')
		}
		w.b = append(w.b, '"')
		w.b = clrimpl.AppendHex(w.b, ptr(frames, off, ps))
		w.b = append(w.b, '"')
	}
	w.b = append(w.b, ']')
}
