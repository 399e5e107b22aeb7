// Package trace is the front door to .NET runtime traces: it opens any
// trace file or stream and yields its events in one shape, whatever the
// format, with typed decoding one call away.
//
// Start with Open for a path or NewReader for any io.Reader (a pipe,
// standard input, a network stream), then call Next until io.EOF:
//
//	r, err := trace.Open("trace.nettrace") // or .netperf, .etl, or a .zip holding one
//	if err != nil { … }                   // errors name the file
//	defer r.Close()
//	for {
//		e, err := r.Next()
//		if err == io.EOF { break }
//		if err != nil { … }
//		ev, err := e.Decode() // the generated clrevents type, for events in the schema
//		…
//	}
//
// # Formats
//
// The format is recognised from the first bytes (never from the name, and
// without seeking): EventPipe .nettrace (NetTrace V4–V6) and .netperf
// (.NET Core 2.0 and 2.1), Windows ETW .etl logs, and a zip archive holding
// exactly one of them (PerfView stores its traces as .etl.zip and
// .nettrace.zip). An EventPipe stream is decoded as it arrives; a zip
// arriving through a pipe, and an ETL log read in TimeOrder, need random
// access and are copied first, to memory up to 32 MB and to a temporary
// file past that (Close removes it). The format readers underneath,
// packages nettrace and etl, stay available through Reader.NetTrace,
// Reader.ETL, Event.NetTrace and Event.ETL.
//
// # The event shape
//
// Every Event has its time (time.Time and the raw clock value), provider
// name and GUID, event ID and version, name, task, opcode, level and
// keywords (from the trace, completed from the schema where the trace does
// not record them), process and thread IDs, CPU (-1 where not recorded),
// pointer size, payload, stack and activity IDs. CLR events are named by
// their manifest symbol ("GCStart_V2"), EventSource events by the trace's
// metadata, the ETW kernel logger's events as TraceEvent names them
// ("Windows Kernel", "EventTrace"), and the other events an ETW log
// describes itself (EventSource manifests, TraceLogging, the descriptions
// a merge adds for manifest-based providers) by those descriptions, which
// Event.TraceSchema gives to decode them.
//
// # Order
//
// Events come in timestamp order by default, as TraceEvent delivers them
// (TimeOrder); WithOrder(FileOrder) keeps the stored order, which holds
// nothing back.
//
// # Cost
//
// Next allocates nothing in steady state: the Event is reused and its
// slices alias the reader's buffers, valid until the next call. What an
// event's provider and ID resolve to in the schema is looked up once per
// EventPipe metadata record or ETW provider, not per event.
package trace
