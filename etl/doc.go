// Package etl reads Windows ETW log files (.etl) in pure Go, on any OS.
//
// Begin with Open, which takes a .etl file, or a .zip or .gz holding one (NewReader
// reads any io.Reader); Reader.Header describes the log. Then call
// Reader.Next until it returns an error, io.EOF for an intact log:
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
//			// a *DamageError: every event outside the damaged
//			// buffers was delivered; r.Damage() lists what was skipped
//			break
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
// # Several logs
//
// A collection often writes its sessions' logs side by side: the kernel
// session's and a user session's (PerfView's X.etl and X.kernel.etl before
// it merges them, xperf's kernel.etl and user.etl), or the logs of a Visual
// Studio diagnostics session (a .diagsession holds diaghub.etl,
// diaghub.kernel.1.etl, diaghub.user_paged.1.etl, …). Merge reads such logs
// as one, merged by timestamp, as the consumer API merges the logs of one
// ProcessTrace call; Event.Log says which log an event is from. Open does
// it for an archive holding several .etl files and no other trace, and
// for a file with the logs beside it that TraceEvent reads with it
// (Siblings).
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
// The descriptions a trace carries of its own events — KernelTraceControl's
// MetaData/EventInfo and EventMapInfo events (the TDH TRACE_EVENT_INFO and
// EVENT_MAP_INFO of the manifest-based providers a merged trace holds), the
// manifests .NET EventSources log in their ManifestData events, the
// metadata TraceLogging events carry in extended data items — are not
// container work: package dynamic parses and interprets them, and package
// trace collects them as the events go by. Nor are the kernel's own
// events' payloads: package kernelevents decodes them, generated from the
// kernel's MOF classes (schema/kernel.yaml); this package says only which
// class each is of (ProviderGUID, KernelGroup).
//
// # Errors and hostile input
//
// Damage is local: a damaged buffer loses that buffer, never the rest of
// the log. A buffer whose header, used size, compressed data or events do
// not parse is recorded as a Damage (its index, the file offset and length
// skipped, and a *FormatError naming the buffer index, its file offset
// and, for one event, the event's offset: "etl: buffer 12 at offset
// 786432: event at 786600: …"); the events before the fault are delivered
// (a buffer is read front to back) and reading goes on with the next
// buffer, in TimeOrder and in FileOrder alike, from files, zips and pipes.
//
// An event whose timestamp cannot be right is left out on its own, the
// buffer read on after it, and recorded as a Damage of that event (its
// bytes, or for a compressed buffer the buffer's offset and no length;
// Events is 1). A buffer holds its events in the order they were written,
// which is time order (no event of the repository's real logs precedes
// the one before it in its buffer), so such an event is one that precedes
// the event before it in its buffer by more than a second of the log's
// clock, or follows the event after it by as much while that one is in
// order with the one before (for a buffer's first event, with the one
// after it); or, where the log header states the session's end, one that
// is further from its neighbour in the buffer than the session lasted
// (and at least a minute). Two events in a row moved together are both
// left out; after a longer run, events that agree with each other and not
// with the run (within the session's length, and not before the log
// header's event) show the run to be the odd one: it is delivered as it
// is, and the buffer reads on rather than losing the rest. Delivered,
// such a time (decades off, from one flipped bit) stretches the span of
// everything read from the log and, in TimeOrder, holds the rest of its
// buffer back behind it. The log header's own event is the clock's
// anchor, read as it is.
//
// A buffer header that states an impossible size (below 72 bytes; above
// the log's BufferSize, or in a compressed log above what BufferSize bytes
// take as literals) gives no way to the next buffer, which is then found;
// so does one that fails the checks below when its size does not lead to
// another header that passes them, or to two in a row whose sizes the log
// allows (a header that does is taken: a writer not seen here may set a
// flag or type these checks do not know, in every buffer). In a log whose
// buffers have all been BufferSize (uncompressed logs) the next is at the
// next multiple of BufferSize, where a header there passes the checks.
// Otherwise (compressed logs, whose buffers are stored at their compressed
// size, and bytes shifted off the multiples: damage a zipped log's
// inflating absorbed) the Reader searches byte by byte, from just after
// the start of the buffer before the bad header when that buffer's stated
// end is where the header was (a buffer that lost bytes is followed by the
// next one before that end), for a header that passes every check: a size
// the log allows; a used size of at least 72 bytes and at most BufferSize,
// and not beyond the size of a buffer stored plain; known buffer flags
// (nothing above ETW_BUFFER_FLAG_COMPRESSED) and type (at most
// ETW_BUFFER_TYPE_DBG_INFO); a processor below the header's
// NumberOfProcessors; a timestamp within the session's span, in the
// events' clock or as a FILETIME, widened by the session's length and by
// at least ten minutes; and a first event (in a compressed buffer, the
// start of its expansion) with a trace header marker, a known header type
// and a size that fits. Each offset costs a bounded amount of work and the
// search only moves forward from where it starts. On the real logs these
// checks accept every buffer header and no other offset. After a searched
// range, Event.Buffer counts it as one buffer. A buffer whose stated size
// runs past the end of the file is searched the same way, from just after
// its start: where a header that passes every check follows inside it,
// its size is damaged (in a compressed log any size up to the limit
// passes), and it is a Damage that ends there, the buffers after it read;
// only where none follows is the file cut short. A buffer read in
// sequence whose processor is not below the header's NumberOfProcessors
// (one of the checks above) is a Damage too, whatever its size: its
// events would come with a processor the logging machine did not have.
// The first buffer is read whatever its processor: it holds the log
// header.
//
// ETW numbers the buffers it writes (their headers' SequenceNumber, unique
// in each of the repository's logs): a buffer whose number, header and
// first 56 bytes after it repeat one read before is a copy of it, and a
// Damage naming that buffer, its events not delivered again. So is one
// with another number and the rest the same, when the header states a
// timestamp: the time the buffer was flushed, with its sizes, processor
// and first event's header (time and thread), tells one buffer, and the
// number is what damage, or a writer that wrote the buffer twice,
// changed. A file whose buffers, repeats
// left out, are more than the log header's BuffersWritten, where the
// header states the session's end, gets a record that skipped nothing
// (Length and Events 0) at the first buffer beyond the count, whose events
// are delivered (not after a search for a header, when the count is an
// estimate, nor on a buffer skipped as damage, which has its record).
//
// After the last event Next returns io.EOF when nothing was skipped, and
// otherwise a *DamageError, on that and every later call: one line giving
// how many ranges and bytes were skipped, then the first one's error in
// full. errors.Is(err, ErrDamaged) holds, errors.As finds the first
// range's *FormatError, and errors.Is(err, ErrTruncated) holds when the
// file was cut: a truncated file yields every complete event, and its cut
// tail (or, when it ends cleanly between buffers, the buffers the log
// header counts but the file lacks) is a Damage like any other.
// Reader.Damage lists the ranges. Reader.SetStrict makes the Reader stop
// at the first damage instead, returning its *FormatError (after every
// complete event, for a truncation). The first buffer, which holds the
// log header, must read: without it NewReader fails. Once the log header
// is read, the first buffer's stated size gets the check every other
// buffer's does: where the log does not allow it, the log header's event
// is still read (it is the log's header), the rest of the buffer is a
// Damage as any buffer with an impossible size is, and the next buffer is
// found as described above. An error reading the underlying file ends the
// log.
//
// Sizes read from the file never make the Reader allocate more than the
// file can back (buffers are read in steps, and a compressed buffer
// expands to at most its stated used size), no input makes it panic, and
// every input comes to a final error after a number of calls to Next
// bounded by its size.
//
// # Allocation
//
// Next does not allocate in steady state: the *Event and its slices are
// reused and alias the Reader's buffers, valid until the next call.
package etl
