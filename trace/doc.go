// Package trace is the front door to .NET runtime traces: it opens any
// trace file or stream and yields its events in one shape, whatever the
// format, with typed decoding one call away.
//
// Start with Open for a path or NewReader for any io.Reader (a pipe,
// standard input, a network stream), then call Next until io.EOF:
//
//	r, err := trace.Open("trace.nettrace") // or .netperf, .etl, or a .zip or .gz holding one
//	if err != nil { … }                   // errors name the file
//	defer r.Close()
//	for {
//		e, err := r.Next()
//		if err == io.EOF { break }
//		if err != nil { … } // a *DamageError after the last event of a damaged trace
//		ev, err := e.Decode() // its generated type, such as *clrevents.GCStartV2
//		…
//	}
//
// # Event tables
//
// Decode, Type and Descriptor find an event's generated type in tables of
// event types (clrimpl.Table), one per generated package, and this
// package links none itself. By default a Reader decodes with the
// registered tables (clrimpl.Tables): every generated package registers
// its table when the program starts, so the ones the program links are
// the ones it decodes with. A program that imports clrevents (for its
// types, or as import _ "github.com/clrgo/clrevents/clrevents") decodes
// every CLR event; one that links only a package clrgen generated for a
// subset (say the runtime's GC events, package gcev) decodes those, and
// its binary holds nothing of the rest. WithEvents names the tables
// instead:
//
//	r, err := trace.Open(path, trace.WithEvents(gcev.Table())) // only gcev's types
//
// When several tables have an event type, the first one decodes it: the
// tables WithEvents gives, in order, or the registered ones, in the order
// they registered; a table with the event's version before one with only
// an older version (decoded as that version, unless WithExactVersions).
// Decode returns the generated package's own types, so a type switch on
// them works; an event no table has gives clrimpl.ErrUnknownEvent (which
// clrevents.ErrUnknownEvent is).
//
// The one generated package this package links is kernelevents: the
// Windows kernel's events (and those KernelTraceControl adds to a kernel
// session) decode with its types whatever the tables, because the front
// door needs their facts for the shape of an ETW trace's events: which
// process a thread is in, which executable a process runs, which thread a
// CPU sample is of. A classic (MOF) event has no event ID; the tables key
// it by (class GUID, opcode, version), as kernelevents does, and a newer
// version than a table has decodes as the newest it has.
//
// # Formats
//
// The format is recognised from the first bytes (never from the name, and
// without seeking): EventPipe .nettrace (NetTrace V4–V6) and .netperf
// (.NET Core 2.0 and 2.1), Windows ETW .etl logs, a zip archive holding
// exactly one of them (PerfView stores its traces as .etl.zip and
// .nettrace.zip), and one of them gzipped (.nettrace.gz, .etl.gz). Other
// compressions (zstd, xz, bzip2, 7-Zip, LZ4, RAR) are named in the error
// ErrFormat gives. An EventPipe stream is decoded as it arrives; a zip or
// gzip file arriving through a pipe, and an ETL log read in TimeOrder,
// need random access and are copied first, to memory up to 32 MB (in a
// buffer that doubles as it grows) and to a temporary file past that,
// whose name is removed as soon as it is made (on Windows, by Close). ETW logs written side by side are
// read as one trace, merged by time (etl.Merge), as TraceEvent reads
// them: Open of X.etl also reads the X.kernel*.etl, X.clr*.etl and
// X.user*.etl beside it (WithSingleLog reads the one file), and a zip
// holding several .etl files and no other trace (a Visual Studio
// diagnostics session's logs) is read whole. The format readers underneath,
// packages nettrace and etl, and their records of each event are
// reachable in one place, package trace/raw, for a program that needs one
// format's details; nothing in this module above trace uses it.
//
// # The event shape
//
// Every Event has its time (time.Time and the raw clock value), provider
// name and GUID, event ID and version, name, task, opcode, level and
// keywords (from the trace, completed from its generated type where the
// trace does not record them), process and thread IDs, CPU (-1 where not
// recorded), pointer size, payload, stack and activity IDs. Events of a generated
// type are named by their manifest symbol ("GCStart_V2"), EventSource
// events by the trace's metadata, the ETW kernel logger's events as
// TraceEvent names them ("Windows Kernel", "EventTrace"), and the other
// events an ETW log describes itself (EventSource manifests, TraceLogging,
// the descriptions a merge adds for manifest-based providers) by those
// descriptions. Event.Descriptor gives what describes an event's fields —
// its generated type, EventSource metadata, the ETW log's own
// descriptions, a kernel event's type in package kernelevents — as one
// clrimpl.Descriptor (package dynamic interprets the descriptions traces
// carry), whatever the format; AppendJSON and AppendText write through it.
// The kernel's events are decoded with kernelevents whatever the tables;
// their process and thread are TraceEvent's (a CPU sample's thread and
// its process from the Thread events), and Stacks matches the stacks a
// kernel session walks to the events they belong to. What TraceEvent
// derives for a kernel event from the log's other events is given by
// Event.FileName (a file operation's, disk I/O's or hard fault's file,
// from the names the FileIO events give FileKeys and FileObjects),
// Event.KeyName (a registry event's key, from the names the registry's
// events give KeyHandles), Event.OldProcess (a context switch's old
// thread's process), and all of them, with a ready thread's awakened
// thread's process (AwakenedProcessID), under TraceEvent's names by
// Event.AppendDerived, which clrdump prints after the payload's fields.
// In a log that names its volumes (the SysConfig events of a merge),
// the paths of the payload that TraceEvent shows with drive letters
// (the FileName of the Image events and of FileIO's naming, Create,
// DirEnum and DirNotify events) decode with them (Reader.UserPath).
//
// # Damage
//
// A damaged trace loses only what the damage touched. Both formats are
// framed (an EventPipe trace is a sequence of blocks that state their
// size, an ETL log a sequence of buffers), so a block or buffer that does
// not parse is skipped and reading goes on at the next one; where the
// damage broke the framing itself, the format reader searches for the
// next block or buffer it can believe. Reader.Damage lists each skipped
// range (offset, length, events lost where the trace tells, the format
// reader's error), and Next ends the trace with a *DamageError
// (errors.Is(err, ErrDamaged)) instead of io.EOF, after every event it
// could read. A trace cut short ends the same way, after its last whole
// event. WithStrict stops at the first damage instead.
//
// What consumers build from a trace (profiles, GC and JIT reports,
// datasets) is built from every event read: they return their result
// together with the error that says what was lost, and DecodeErrors
// collects the events they needed that did not decode, naming the first
// few (event, offset) and counting the rest.
//
// # Order
//
// Events come in timestamp order by default, as TraceEvent delivers them
// (TimeOrder); WithOrder(FileOrder) keeps the stored order, which holds
// nothing back; WithOrder(ThreadOrder) gives each thread's events in time
// order at the least cost the format allows (an EventPipe trace's stored
// order, an ETL log's time order).
//
// # Cost
//
// Next allocates nothing in steady state: the Event is reused and its
// slices alias the reader's buffers, valid until the next call. What an
// event's provider resolves to in the tables is looked up once per
// EventPipe metadata record or ETW provider, not per event, and Decode
// reuses one value per event type: after the first event of each type,
// decoding allocates nothing.
package trace
