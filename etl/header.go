package etl

import (
	"fmt"
	"math/bits"
	"time"
	"unicode/utf16"
)

// LogHeader holds the facts of the log's TRACE_LOGFILE_HEADER, which ETW
// writes as the payload of the kernel EventTrace header event (group 0,
// type 0), the first event of the first buffer.
type LogHeader struct {
	// BufferSize is the session's buffer size in bytes. Buffers of a
	// compressed log are shorter in the file.
	BufferSize uint32
	// Version is the OS version word: major in the low byte, then minor,
	// sub and sub-minor versions. ProviderVersion is the OS build number.
	Version         uint32
	ProviderVersion uint32
	// NumberOfProcessors is the logging machine's processor count.
	NumberOfProcessors uint32
	// EndTime is when the session stopped (zero if it never said).
	EndTime time.Time
	// TimerResolution is the system clock interrupt period in 100 ns units.
	TimerResolution uint32
	// MaximumFileSize is in MB.
	MaximumFileSize uint32
	// LogFileMode holds the EVENT_TRACE_* session mode flags.
	LogFileMode    uint32
	BuffersWritten uint32
	StartBuffers   uint32
	// PointerSize is the logging kernel's pointer size, 4 or 8. Events
	// carry their own (Event.PointerSize): 32-bit processes log 4 in a
	// 64-bit log.
	PointerSize uint32
	EventsLost  uint32
	CPUSpeedMHz uint32
	// SessionName and LogFileName are the strings after the structure.
	SessionName string
	LogFileName string
	// UTCOffsetMinutes is TIME_ZONE_INFORMATION.Bias: minutes to add to
	// local time to get UTC (480 for US Pacific standard time).
	UTCOffsetMinutes int32
	// BootTime is when the logging machine booted.
	BootTime time.Time
	// PerfFreq is the QueryPerformanceCounter frequency, ticks per second.
	PerfFreq int64
	// StartTime is the session start time as the log states it.
	StartTime time.Time
	// ClockType is ReservedFlags: ClockQPC, ClockSystemTime or
	// ClockCPUCycle.
	ClockType   uint32
	BuffersLost uint32

	// HeaderTimestamp is the raw timestamp of the header event itself:
	// TraceEvent's session start, the zero of its relative milliseconds.
	HeaderTimestamp int64
	// HeaderProcessID and HeaderThreadID identify who wrote the header.
	HeaderProcessID, HeaderThreadID uint32
	// HeaderVersion is the header event's version (2 on current systems).
	HeaderVersion uint16
	// DataLen is the header event's payload length.
	DataLen int

	// Frequency is the tick rate of event timestamps in Hz, derived from
	// ClockType: PerfFreq for QPC, 10 MHz for system time, CPUSpeedMHz
	// MHz for the cycle counter.
	Frequency int64
}

// OSVersion returns the major and minor OS version from Version.
func (h *LogHeader) OSVersion() (major, minor int) {
	return int(h.Version & 0xff), int(h.Version >> 8 & 0xff)
}

// Compressed reports whether the log file mode asks for compressed
// buffers (EVENT_TRACE_COMPRESSED_MODE).
func (h *LogHeader) Compressed() bool { return h.LogFileMode&0x04000000 != 0 }

// Circular reports whether the log was written in circular mode
// (EVENT_TRACE_FILE_MODE_CIRCULAR: PerfView's /CircularMB, xperf's
// -FileMode Circular): once the file reached its size, each new buffer
// took the place of the oldest one after the StartBuffers at its start,
// so its buffers are not in the order they were written, and
// BuffersWritten counts those overwritten too. The Reader reads each
// processor's buffers of such a log in the order their headers' times
// give, and does not take a count above the buffers the file holds for a
// cut (as it does for a log short of its MaximumFileSize, which cannot
// have wrapped).
func (h *LogHeader) Circular() bool { return h.LogFileMode&0x2 != 0 }

// parseLogHeader decodes the TRACE_LOGFILE_HEADER payload p of a header
// event whose header type says pointer size hdrPtr.
func parseLogHeader(h *LogHeader, p []byte, hdrPtr int) error {
	if len(p) < 56 {
		return fmt.Errorf("log file header is %d bytes, too short", len(p))
	}
	h.BufferSize = le.Uint32(p[0:])
	h.Version = le.Uint32(p[4:])
	h.ProviderVersion = le.Uint32(p[8:])
	h.NumberOfProcessors = le.Uint32(p[12:])
	h.EndTime = fileTime(int64(le.Uint64(p[16:])))
	h.TimerResolution = le.Uint32(p[24:])
	h.MaximumFileSize = le.Uint32(p[28:])
	h.LogFileMode = le.Uint32(p[32:])
	h.BuffersWritten = le.Uint32(p[36:])
	h.StartBuffers = le.Uint32(p[40:])
	h.PointerSize = le.Uint32(p[44:])
	h.EventsLost = le.Uint32(p[48:])
	h.CPUSpeedMHz = le.Uint32(p[52:])
	ptr := hdrPtr
	if h.PointerSize == 4 || h.PointerSize == 8 {
		ptr = int(h.PointerSize)
	}
	// LoggerName and LogFileName pointers, TIME_ZONE_INFORMATION (172
	// bytes), then BootTime aligned to 8.
	tz := 56 + 2*ptr
	boot := align8(tz + 172)
	end := boot + 8*3 + 8
	if len(p) < end {
		return fmt.Errorf("log file header is %d bytes, too short for pointer size %d (needs %d)", len(p), ptr, end)
	}
	h.UTCOffsetMinutes = int32(le.Uint32(p[tz:]))
	h.BootTime = fileTime(int64(le.Uint64(p[boot:])))
	h.PerfFreq = int64(le.Uint64(p[boot+8:]))
	h.StartTime = fileTime(int64(le.Uint64(p[boot+16:])))
	h.ClockType = le.Uint32(p[boot+24:])
	h.BuffersLost = le.Uint32(p[boot+28:])
	rest := p[end:]
	h.SessionName, rest = utf16z(rest)
	h.LogFileName, _ = utf16z(rest)

	switch h.ClockType {
	case ClockSystemTime:
		h.Frequency = 10_000_000
	case ClockCPUCycle:
		h.Frequency = int64(h.CPUSpeedMHz) * 1_000_000
	default:
		h.Frequency = h.PerfFreq
	}
	if h.Frequency <= 0 {
		return fmt.Errorf("log file header gives no usable clock frequency (clock type %d, PerfFreq %d, CPU %d MHz)", h.ClockType, h.PerfFreq, h.CPUSpeedMHz)
	}
	return nil
}

// utf16z decodes a NUL-terminated UTF-16LE string from b and returns the
// bytes after it.
func utf16z(b []byte) (string, []byte) {
	var u []uint16
	for i := 0; i+1 < len(b); i += 2 {
		c := le.Uint16(b[i:])
		if c == 0 {
			return string(utf16.Decode(u)), b[i+2:]
		}
		u = append(u, c)
	}
	return string(utf16.Decode(u)), nil
}

// fileTimeEpoch is 1601-01-01 in Unix seconds.
const fileTimeEpoch = -11644473600

// fileTime converts a FILETIME (100 ns since 1601) to a UTC time; 0 gives
// the zero time.
func fileTime(ft int64) time.Time {
	if ft == 0 {
		return time.Time{}
	}
	sec := ft / 10_000_000
	ns := (ft % 10_000_000) * 100
	return time.Unix(sec+fileTimeEpoch, ns).UTC()
}

// clock converts raw timestamps to wall-clock time.
type clock struct {
	startTS   int64 // raw timestamp of the header event
	startSec  int64 // the log's StartTime, Unix seconds
	startNsec int64 // and nanoseconds
	freq      uint64
}

func newClock(h *LogHeader) clock {
	c := clock{startTS: h.HeaderTimestamp, freq: uint64(h.Frequency)}
	if c.freq == 0 {
		c.freq = 1
	}
	if !h.StartTime.IsZero() {
		c.startSec = h.StartTime.Unix()
		c.startNsec = int64(h.StartTime.Nanosecond())
	}
	return c
}

// time returns the wall-clock time of raw timestamp ts: the log's start
// time plus (ts - header timestamp) / frequency, as TraceEvent computes it.
// It does not allocate.
func (c *clock) time(ts int64) time.Time {
	d := ts - c.startTS
	neg := d < 0
	u := uint64(d)
	if neg {
		u = uint64(-d)
	}
	sec := u / c.freq
	rem := u % c.freq
	hi, lo := bits.Mul64(rem, 1_000_000_000)
	ns, _ := bits.Div64(hi, lo, c.freq) // rem < freq, so no overflow
	s, n := int64(sec), int64(ns)
	if neg {
		s, n = -s, -n
	}
	return time.Unix(c.startSec+s, c.startNsec+n).UTC()
}
