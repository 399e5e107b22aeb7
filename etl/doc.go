// Package etl reads Windows ETW log files (.etl) in pure Go, on any OS.
//
// Begin with Open, which takes a .etl file or a .zip holding one (NewReader
// reads any io.Reader); Reader.Header describes the log. Then call
// Reader.Next until it returns io.EOF:
//
//	r, err := etl.Open("trace.etl.zip")
//	...
//	defer r.Close()
//	for {
//		e, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		if err != nil {
//			// a *FormatError; Next may be called again to go on
//		}
//		// e.ProviderGUID, e.ID, e.Version, e.PointerSize, e.Payload, ...
//	}
//
// The payloads of CLR runtime events decode with package clrevents.
//
// # Format
//
// An ETL file is a sequence of buffers, each a WMI_BUFFER_HEADER (72 bytes:
// buffer size, saved offset, timestamps, processor, buffer flags and type)
// followed by events aligned to 8 bytes; unused space is filled with 0xFF.
// The first event of the first buffer is the kernel EventTrace header event
// whose payload, TRACE_LOGFILE_HEADER, describes the log (Reader.Header).
//
// # Order
//
// Each processor fills its own buffers, so a file holds per-processor
// streams of buffers. Given an io.ReaderAt (Open, or NewReader on an
// *os.File or *bytes.Reader) the Reader merges those streams by timestamp
// the way the Windows consumer API does, which is the order TraceEvent and
// its baselines see (TimeOrder). Over a plain io.Reader it delivers events
// in file order (FileOrder), holding one buffer at a time.
//
// # Time
//
// Event.Timestamp is the raw clock value; LogHeader.ClockType says which
// clock: QPC ticks at PerfFreq (the usual case), system time (FILETIME,
// 100 ns) or CPU cycles at CPUSpeedMHz. Event.Time is wall-clock UTC:
// StartTime + (Timestamp - HeaderTimestamp) / frequency. Reader.RelativeMSec
// gives TraceEvent's TimeStampRelativeMSec: milliseconds since the header
// event's timestamp, which is TraceEvent's session start.
//
// # Pointer size
//
// Event.PointerSize is 4 or 8 per event: from EVENT_HEADER's
// EVENT_HEADER_FLAG_32_BIT_HEADER / _64_BIT_HEADER flag when set, else from
// the header type (every header type comes in a 32- and a 64-bit flavour;
// relogged files mark 32-bit events only by the type). A 32-bit process in
// a 64-bit log logs 4. LogHeader.PointerSize is the logging kernel's.
//
// # Supported
//
// Header kinds: EVENT_HEADER (with extended data items: related activity
// id, SID, terminal session id, instance info, 32/64-bit stack traces with
// MatchId, PEBS index, PMC counters, event key, TraceLogging schema,
// provider traits, process start key, ... kept raw in Event.Extended and
// decoded where listed in Event), SYSTEM_TRACE_HEADER full and compact,
// PERFINFO_TRACE_HEADER, classic EVENT_TRACE_HEADER (MOF), and
// EVENT_INSTANCE_GUID_HEADER, each in 32- and 64-bit flavour. WPP trace
// messages (MESSAGE_TRACE_HEADER) are read from their documented optional
// fields, but no test file holds one.
//
// Buffer modes: plain buffers of any size up to 64 MB, buffers with 8- or
// 16-bit processor numbers (ETW_BUFFER_FLAG_PROC_INDEX), and compressed
// buffers (EVENT_TRACE_COMPRESSED_MODE logs, ETW_BUFFER_FLAG_COMPRESSED),
// which hold the buffer's events compressed with [MS-XCA] Plain LZ77 and
// are stored at their compressed size.
//
// Not supported: the TIMED, ERROR and WNODE_HEADER header types (an error
// names the event), buffers compressed any other way (an error wrapping
// ErrUnsupported names the buffer), real-time sessions, and payloads
// nothing describes (see package clrevents for the CLR's).
//
// # Events the trace describes
//
// Schemas gathers, as events go by, the descriptions a trace carries of
// its own events: KernelTraceControl's MetaData/EventInfo and EventMapInfo
// events (ParseEventInfo, ParseEventMapInfo: the TDH TRACE_EVENT_INFO and
// EVENT_MAP_INFO of the manifest-based providers a merged trace holds) and
// the manifests .NET EventSources log in their ManifestData events (ID
// 65534, in chunks); TraceLogging events (EventSource.Write, sources made
// with EtwSelfDescribingEventFormat, many Windows components) carry their
// own in extended data items (ParseTraceLogging). Its EventSchema for an event names it as TraceEvent
// does and decodes its payload to JSON or text (AppendJSON, AppendText),
// with errors that name the field and its byte offset. The kernel's own
// events have parsers of their own (ParseSampledProfile, ParseImage, …).
//
// # Errors and hostile input
//
// Errors are *FormatError values naming the buffer index, its file offset
// and, for one event, the event's offset: "etl: buffer 12 at offset
// 786432: event at 786600: …". After an error Next continues with the next
// buffer. A truncated file yields every complete event, then an error
// wrapping ErrTruncated. Sizes read from the file never make the Reader
// allocate more than the file can back (buffers are read in steps, and a
// compressed buffer expands to at most its stated used size), and no input
// makes it panic.
//
// # Allocation
//
// Next does not allocate in steady state: the *Event and its slices are
// reused and alias the Reader's buffers, valid until the next call.
package etl
