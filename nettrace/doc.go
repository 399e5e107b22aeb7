// Package nettrace is a streaming reader for EventPipe trace files, the
// event logs the .NET runtime writes on every platform (dotnet-trace,
// DiagnosticsClient, DOTNET_EnableEventPipe).
//
// Begin with Open, which takes a .nettrace or .netperf file, or a .zip or
// .gz holding one (NewReader reads any io.Reader); Reader.Info says what the
// trace records about itself. Then call Reader.Next until it returns
// io.EOF:
//
//	r, err := nettrace.Open("trace.nettrace")
//	...
//	defer r.Close()
//	for {
//		e, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		if err != nil {
//			return err // an *Error: it names the block and the offset
//		}
//		// e.Provider, e.ID, e.Version, e.PointerSize, e.Payload, ...
//	}
//
// The payloads of CLR runtime events decode with package clrevents (see
// Payloads below).
//
// # Formats
//
// NewReader recognises the format from the first bytes:
//
//   - .netperf, .NET Core 2.0: a FastSerialization stream holding a
//     "Microsoft.DotNet.Runtime.EventPipeFile" object (versions 1 and 2)
//     directly followed by event records; metadata arrives as events with
//     metadata ID 0 and is identified by its stream offset; stacks are
//     inline. These traces do not record the pointer size (8 is reported)
//     or the process ID.
//   - .netperf, .NET Core 2.1: a "Trace" object version 3 then EventBlock
//     objects with uncompressed records, inline metadata and inline stacks.
//   - .nettrace V4 and V5 ("Nettrace" magic, then FastSerialization): a Trace
//     object version 4, then MetadataBlock, StackBlock, EventBlock (with
//     compressed headers when the block's flags say so) and SPBlock
//     (sequence point) objects. V5 differs only in optional metadata tags
//     (opcode, and V2 field descriptions that allow arrays), which are read.
//   - .nettrace V6: "Nettrace", a zero word and major/minor versions, then
//     plain blocks: TraceBlock (with key/value pairs), MetadataBlock (new
//     encoding, optional provider GUID, opcode, level, version, message
//     template, attributes), StackBlock, EventBlock, SequencePointBlock
//     (with flags that flush the thread and metadata tables), ThreadBlock,
//     RemoveThreadBlock, LabelListBlock (activity IDs and other labels that
//     events reference by index) and EndOfStreamBlock. Unknown V6 blocks are
//     skipped, as the spec asks; so is a thread row's info of a kind a
//     later minor version added (the rest of its row), and data in an
//     EndOfStreamBlock that ends the input. A metadata row's EventId, a
//     varuint32, is kept as its low 16 bits when it is larger, as
//     TraceEvent keeps it (Metadata.EventID), and its events are read.
//
// Open also accepts a .zip archive holding one trace, as PerfView keeps
// them, and a gzipped trace (.nettrace.gz); the content is decompressed
// as it is read.
//
// The reader follows microsoft/perfview's NetTraceFormat.md,
// NetTraceFormat_v5.md and NetPerfFormat.md, and TraceEvent's behaviour
// where the documents are silent.
//
// # Streaming and lifetimes
//
// The input is read once, front to back, block by block; only the current
// block, the stack and label tables since the last sequence point, and the
// metadata and thread tables are kept. Events are delivered in file order,
// which in V4+ is sorted per capture thread but not globally (sort between
// sequence points if you need a global order).
//
// Next reuses one Event value and its buffers: the *Event it returns, and
// every slice in it (Payload, Stack), are valid only until the next call to
// Next. Copy what you need to keep. Strings (Provider, Name) and the
// Metadata, Thread and Labels pointers are never reused and may be kept,
// but are shared: do not modify them, nor the Event (Next writes only
// the fields that change from one event to the next). In steady state
// Next does not allocate; it allocates only when new metadata, stack,
// thread or label blocks arrive, or when a block is larger than any seen
// before.
//
// A Reader that has read to the end of its input (or stopped at an error
// for good) leaves its buffers to the next Reader: the stream buffer, the
// block buffers, the stack tables and, in time order, what the merge holds
// events in. A program that reads many traces one after the other (a
// collector's rolling sessions, a dataset of thousands) makes them about
// once; the buffers are in sync.Pools, which the garbage collector empties
// when no Reader wants them. A Reader dropped before the end of its input
// leaves nothing.
//
// # Live streams
//
// A stream from a live session (package diagnostics) arrives over
// minutes. In TimeOrder, SetLowLatency hands each event out as soon as
// the stream's IsSorted marks allow instead of at the next sequence point,
// in the same order. Reader.Dropped counts the events the runtime dropped,
// from the gaps in each thread's sequence numbers (in V6 from 1 at the
// ThreadBlock that defines the thread, as TraceEvent counts them). After
// damage the reader waits only for the bytes a judgement needs. A V6
// block is read once it and the block after it have come, which is as
// far as the check that it is a block looks. The search for the next
// block after damage to the blocks' framing (a header or size that is not
// credible) reads on with the bytes at hand: a V3–V5 block header is told
// by its own bytes; in V6 a header is let go on its kind, size and first
// bytes when they do not check, and otherwise judged on its block and the
// one after it, which it waits for. What cannot be judged without the
// bytes is waited for: a block whose stated size is damaged is read to
// that size (the bytes tell where it ends), and a header that damage or a
// payload's bytes made up that checks as far as that waits for the bytes
// it states, up to 60 KiB. (A V1/V2 stream, from .NET Core 2.0 and 2.1,
// is never live: its search looks 60 KiB ahead at once.)
//
// # Checking a stream
//
// A Checker checks the framing of a NetTrace stream (V4 to V6) as it is
// written to it, without keeping it: headers, object tags and type names,
// block sizes and padding, and the end of the stream. A program that
// copies a live stream to a file writes it to a Checker too, and its
// Close says whether the copy is a whole trace, or where and how it was
// cut:
//
//	var c nettrace.Checker
//	n, err := io.Copy(io.MultiWriter(f, &c), stream)
//	...
//	if err := c.Close(); err != nil {
//		return err // a *CheckError: "the stream ended in the middle of an EventBlock at byte 1,234,567 (65,536-byte block, 12,000 bytes read)"
//	}
//
// # Payloads
//
// Event.Payload is the raw payload. CLR runtime events (providers
// Microsoft-Windows-DotNETRuntime, …Rundown, …Private) usually come with no
// field descriptions in their metadata and are decoded from the runtime's
// manifest (package clrevents), keyed by (Provider, ID, Version), with
// Event.PointerSize for pointer-sized fields. Events of other EventSources
// (TplEventSource, Microsoft-DotNETCore-EventPipe's ProcessInfo, user
// EventSources) describe their fields in the metadata; Metadata.Describe
// gives them as a description package dynamic interprets, and
// Metadata.AppendJSON and Metadata.AppendText decode them through it.
//
// # Errors
//
// Errors are *Error values that name the block and the byte offset, e.g.
//
//	nettrace: EventBlock at offset 123456: event header at 123500: payload size 900 exceeds the block (12 bytes left)
//
// Malformed input satisfies errors.Is(err, ErrFormat); input that ends
// early, errors.Is(err, io.ErrUnexpectedEOF) (the message says
// "truncated"). Lengths and counts read from the file are checked against
// what the input holds before anything is allocated for them.
//
// # Damage
//
// A damaged trace loses only what the damage touched: the reader skips it
// and reads on, recording each skipped range as a Damage (Reader.Damage),
// and ends with a *DamageError instead of io.EOF (errors.Is(err,
// ErrDamaged)), whose message counts the ranges, bytes and events lost
// and gives the first in full. SetStrict(true) stops at the first damage
// instead, with its *Error.
//
//   - Inside a block, a record that does not parse loses the rest of its
//     block; the events before it in the block are delivered. So does, in
//     a V4+ event block, an event whose timestamp falls outside the range
//     its block's header states (the format's MinTimestamp and
//     MaxTimestamp; a header that states none, zeros, is not checked):
//     the headers after it are deltas from it. So does one from before
//     the session's start (the trace header's sync time, less a
//     millisecond: no real trace holds one), once a block's stated range
//     or an event confirmed that start; a block whose header states no
//     range, or a range wholly before the start, is checked against the
//     start, and one said to begin before it from the start on. In V1–V3,
//     whose events the runtimes wrote in time order whatever their thread,
//     an event that precedes the one before it, or follows the next while
//     that one is in order with the one before, by more than a
//     millisecond, loses only its record: its time is garbled (the trace's
//     last event, garbled forward, shows nothing and is kept). Two events
//     in a row moved together are both left out; after a longer run,
//     events that agree with each other and not with the run show it to
//     be the odd one, and the trace reads on from them. A metadata
//     record or V6 metadata row that does not parse loses only itself, and
//     events whose metadata, stack (V4+: its stack ID is in no stack
//     block since the last sequence point), thread or label list is not
//     defined (lost, or never there) are skipped one by one and counted,
//     in one Damage per kind: an event whose stack block was lost is not
//     handed out without its stack, as a sample a profile would count on
//     no stack. But a compressed header (V4+) whose metadata is not defined
//     and whose sequence number is not its capture thread's next is
//     itself damage, and each header after it in the block inherits the
//     fields it set and adds its time to that one's: the rest of the block
//     is lost with it, rather than read with garbled threads and moved
//     times. A compressed header (V4, V5; not a block's first) that names
//     a capture thread never seen, nor listed by a sequence point,
//     numbered not 1 but a delta of less than 2^21 above the event before
//     it, while no damage was found since the last sequence point, is
//     damage too: a session numbers each thread's events from 1, and so a
//     damaged header that still parses (a flipped capture thread byte, or
//     a flipped flags bit that makes it read its fields from other bytes)
//     hands its made-up thread to the headers that inherit it. Where the
//     number is one known thread's next, a thread first seen blocks
//     before, the field is the damage: the events are that thread's, read
//     so, a Damage of the header that lost nothing. (A thread first seen
//     in the block or the one before may itself be the one the damage
//     made up, at its first header: nothing tells, and the events are
//     read as they state.) Else each such
//     event is skipped, counted in one Damage with the others; but when a
//     known thread's number then jumps by more than the events so skipped,
//     the block's numbers and times were moved from the damaged header
//     on, and the rest of the block is lost with it. A thread whose first
//     events the runtime dropped, numbered so by chance, is taken for
//     damage too; none of the repository's or the shared traces has one
//     (each numbers every thread from 1).
//   - The framing: a V3–V5 (FastSerialization) block whose end tag is not
//     where its size says, or whose header is not one, is damage to the
//     framing: the reader searches on for the next block header, whose
//     tags and type names are distinctive (in the bytes read as the
//     damaged block first, since a damaged size may have swallowed the
//     next blocks). Where the bytes read as a block, from its start, hold
//     the next block's header (an EndObject tag, then a header) and its
//     end tag is not where its size says, or its size runs past the
//     input's end, the size is what the damage made too large: the block
//     ends there and is read, and the blocks after it are, the size
//     field recorded as a Damage of its 4 bytes that lost no event. So
//     is a size the damage made too small: where the block's end is not
//     followed by its EndObject tag, the first EndObject tag and block
//     header in the next 60 KiB are its real end when the bytes up to
//     them, with the block's, read as whole records of its kind to the
//     byte (stacks, a sequence point's threads, event records whose sizes
//     or compressed headers' fields add up); the block is read to there,
//     but not when the next block's header follows the byte where the
//     EndObject tag should be: then the tag is the damage, a Damage of
//     its byte. A block whose header is right but for its three tags is
//     read, the tags a Damage of their 3 bytes that lost no event
//     (skipped, a metadata or stack block would take the events of every
//     block that refers to it). The stream's end is an EndObject and a
//     NullReference tag as the input's last bytes: not the same two
//     bytes in a payload, where a damaged size may end a block.
//     A block version this reader does not read ends the
//     trace with ErrUnsupported only in the stream's first block, where
//     it means a newer format. Later (a writer does not change the
//     version midway), or negative anywhere, it is a damaged field of a
//     header whose tags and type name are right: the block is read as the
//     others were, and the field recorded as a Damage of its 4 bytes that
//     lost no event. So is a block's version (one this reader reads) or
//     minimum reader version other than what the trace version's writers
//     state in every block (a .netperf's 1 and 0, a .nettrace's 2 and 2),
//     the first block's included. So is the trace header's sync time when it is no
//     date (a field out of range, or a day of the week that is not the
//     date's, counted from Sunday = 0 as SYSTEMTIME does or from Monday =
//     0 as one-collect's record-trace writes it): every wall-clock time
//     counts from it. So are the tags of the stream's first object (Trace,
//     or a .netperf's EventPipeFile) whose type name and the rest of
//     whose header are right: a Damage of their 3 bytes. So is another
//     field of that header (its version, type name, type name length or
//     end tag) that keeps the reader from taking it, when every other
//     field is what one format version's writers write (a .nettrace's
//     Trace of version 4 and minimum reader version 4; a .netperf's Trace
//     3 or EventPipeFile 2 or 1, minimum 0) and what follows it is what
//     they write after it (a pointer size of 4 or 8, then a block header
//     of that version's tags, block version and minimum reader version;
//     or credible event records): the trace is read as that version, the
//     field a Damage of its bytes. A header whose minimum reader version
//     is above that version's (a newer writer's format, which this reader
//     must not read), whose blocks are not that version's, or with two
//     fields damaged, still ends NewReader with its error (ErrUnsupported
//     for a version). So is a V4/V5
//     StackBlock's first stack ID when it is not the one the block must
//     have (the runtime numbers stacks from 1 after each sequence point,
//     and on from block to block) while no damage was skipped since the
//     last StackBlock: the block is read with that one, a Damage of 4
//     bytes (the events would otherwise get other stacks, or none);
//     unless its first ID is below that one and its stacks are the ones
//     the table holds under their IDs, IP for IP: then the block was
//     written twice, and is skipped, a Damage of its bytes that lost no
//     event. A V4/V5 EventBlock's or MetadataBlock's header size or
//     flags other than the 20 and 1 the runtime writes are taken for
//     damaged fields, a Damage of 4 bytes, when the block reads as whole
//     records with those, more of their bytes credible (defined
//     metadata, times in the block's range, each capture thread's next
//     number) than with the stated ones; a newer writer's longer header is
//     read as it states. So are the flags of a V4/V5 block's first
//     compressed header, a Damage of their byte, when they are not the
//     ones the runtime writes there (an event block's 0xcf or 0x8f, a
//     metadata block's 0xc4 or 0xc6), or a metadata record does not
//     parse, and the block reads as whole records, as credible at least,
//     with the usual ones: every header after the first inherits the
//     fields it sets, and each was misread. A StackBlock that numbers from
//     1 while the table holds stacks follows a sequence point that damage
//     took, or moved after it: the table starts again with it, and a
//     sequence point before the next event block (the moved one) keeps
//     that table. A V4/V5
//     metadata record that gives an ID the trace defined another meaning
//     is damage (the runtime gives each metadata its own ID), and the
//     ID's events keep its first. The runtime numbers its metadata 1, 2,
//     3, … as it writes them: a record whose ID is not defined, more than
//     8 above the next one and other than it in one byte only has the
//     field damaged, a Damage of its 4 bytes; it defines the next ID. V1/V2 records and V6 blocks carry no
//     marks; after damage the reader reads one only when
//     it is credible (its sizes add up, it refers to metadata it has, its
//     timestamp is in range, and the next one after it checks too; a V6
//     block larger than the 60 KiB the reader looks at at once, as
//     writers write them, is read, and believed when the header after it
//     checks), searching byte by byte for the next that is.
//   - Shifts: damage to a zipped trace's compressed bytes seldom stops
//     inflating; deflate decodes on, garbling some output, and leaves
//     what follows earlier or later than it was. V3–V5 blocks pad their
//     contents to a 4-byte stream offset: after damage the reader checks
//     the next block's padding and takes its alignment from it, and
//     while that alignment is not the one the trace was written with, from
//     each block's after it: an alignment found inside the damage (blocks
//     moved whole, each padded for where it was) is not carried into the
//     intact blocks after it. A block that damage moved whole (two
//     blocks swapped) is padded for where it was: where a block read
//     with its place's padding is not followed by its EndObject tag,
//     and another padding fits it (its content's start, its EndObject
//     tag and the next header where its size says, whole records of its
//     kind), it is read with that one, the padding a Damage of its bytes
//     that lost no event, and the blocks after it are checked until one
//     is where it was written; until the next sequence point, a
//     thread's numbers going back to 1 are then taken as its blocks out
//     of order, not as a recycled thread ID, so that the events of the
//     block moved ahead do not count as drops. A block
//     that lost bytes runs its stated size into the next block, whose
//     header then begins in its last bytes: where the block's end is not
//     followed by what must follow it, the reader looks back into those
//     bytes before searching on. V1/V2 metadata records are known by the
//     offsets their writer wrote them at, which a shift moves. The
//     runtime writes each just before the first event that refers to it,
//     so when, after damage, an event refers to an ID no metadata has
//     and the record just before it is a metadata record, their
//     difference is the shift: the reader then files that damage's
//     metadata records under their offsets less it too, and the events
//     after a shift keep their metadata.
//   - Repeats: EventPipe blocks carry no checksum, so an event block that
//     a fault wrote twice would hand its events out twice. The reader
//     remembers the length and the first 128 bytes (a hash of them) of
//     the last 64 event blocks; an event block that matches one, which
//     no two blocks of a trace do (they hold the block's time range and
//     its first event's thread, number and time), is skipped, a Damage
//     of its content that lost no event, and its numbers are not read.
//   - The end: a trace cut short yields every whole event, those of the
//     block the cut falls in included, and a Damage that runs to the end
//     of the input; its *DamageError also satisfies errors.Is(err,
//     io.ErrUnexpectedEOF). An error of the source itself (a failed read;
//     a zipped trace's checksum, which damage in its compressed bytes
//     breaks) ends the reading with that error, or, after damage, with a
//     *DamageError whose Stopped it is: the damage is reported either way.
//     Input after the trace's end (its NullReference tag, V6 EndOfStream
//     block or V1/V2 trailer) is damage too, one Damage of all of it
//     (Events -1), whose message says whether it begins with zeros or
//     with another trace's header (a file written over a longer one, two
//     traces joined into one file: a Reader reads the first).
//   - Lost events: from NetTrace V4 each thread numbers its events, and
//     the gaps the skipped range leaves are its Damage.Events (the runtime's
//     own drops stay in Reader.Dropped); before V4 the count is unknown
//     (-1). An event skipped on its own (its metadata not defined) counts
//     once, in its record, when its number follows its thread's; else the
//     gap it leaves counts it. The events of a block read before damage
//     was found in it may carry damaged numbers: the gaps in that block
//     are not counted as the runtime's drops, and the next gap of each of
//     its threads counts as lost. The gaps a sequence point (or a V6
//     thread removal) shows are discarded when damage is found at the
//     start of the block after it: such damage often began a few bytes
//     sooner, in the sequence point's own numbers. Damaged bytes that parse as records can
//     still make the count too high (never more events than a record's
//     bytes could hold, two bytes an event) or too low. Where the damage
//     is not found at all, the numbers it moved do not count as drops
//     (a gap waits for a later number of its thread, and the thread's
//     next numbers undo the move; see Reader.Dropped), but the events it
//     took leave gaps that do.
//
// Damaged bytes that still parse come out as events: no check of the
// format tells a real event's header followed by a garbled payload from
// the real event, and garbage can pass every check. Damage that garbles a
// zipped trace's deflate data does both for a while before a check fails.
//
// A V6 trace whose damage destroys both a sequence point that flushes the
// metadata and the metadata block that defines its IDs anew gives the
// events after them under the older definitions: nothing left in the
// trace tells them apart.
package nettrace
