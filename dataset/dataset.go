// Package dataset writes .NET runtime traces as a Parquet dataset that
// DuckDB, Spark, Trino, ClickHouse and BigQuery query unchanged: one table
// per event type, typed columns from the schema, one file per trace and
// table, partitioned on disk by provider and event.
//
// The event types are those of the tables the trace.Reader given to
// WriteTrace decodes with (trace.WithEvents), by default every generated
// package the program links; this package links clrevents, so by default
// every CLR event has its table. Each table is made from the event's
// Descriptor (trace.Event.Descriptor): its provider, name and columns.
//
// # Layout
//
//	DIR/_clrevents_dataset                            marks a dataset (engines skip _ files)
//	DIR/events/provider=P/event=E/T.parquet           one table per event type
//	DIR/generic/T.parquet                              events nothing describes, decode errors
//	DIR/stacks/T.parquet                               each distinct stack of a trace, once
//	DIR/event_stacks/T.parquet                         an ETW log's events' stacks walked after them
//	DIR/traces/T.parquet                               one row per trace
//	DIR/_clrevents_traces/ID                           a trace's identity (see below), holding its name
//	DIR/_clrevents_tmp/                                writers' staging folder, while they run
//
// P is the provider's name (Microsoft-Windows-DotNETRuntime), E the
// name of the event type (GCStart_V2; for the Windows kernel's events,
// decoded with package kernelevents, its type's name under the provider
// the events are shown under: provider=Windows Kernel/event=ProcessStart_V3,
// provider=KernelTraceControl/event=DbgID_RSDS_V2), or, for an event the
// trace describes itself (an EventSource event's metadata; an ETW log's
// descriptions: manifest-based providers, EventSource manifests,
// TraceLogging; see trace.Event.Descriptor), its name with "_" for "/"
// (Microsoft-Windows-Kernel-File/id12_v1); T the trace's file name,
// without the dots and underscores it begins with (engines skip files
// named .x or _x: _gc.nettrace is gc.nettrace-….parquet; versions before
// kept the underscores: such a trace's files stay as they were written,
// and are still found when it is added again under the same name; renamed
// without them, in every folder, the engines read them), plus a
// hash of the name the trace was given by
// (gc.nettrace-1f2e3d4c5b6a7988.parquet): stable, so that adding a trace
// twice is an error instead of a duplicate. A trace given another name (a
// copy, another spelling of its path, a copy cut short) is found by its
// identity instead: ID is a hash of what the trace says of itself (its
// format, start, clock, process) and of its first 64 events, and the
// file holds the name the trace was added by, which the error names.
// (Datasets written before identities were kept have none for their
// traces.) A copy cut short holds the whole trace's first events: to add
// the whole trace after it, remove the cut copy's files (its T in every
// folder) and its identity file first. Another trace given a name a
// trace of the dataset has (app.nettrace, the same relative path in
// another folder) is refused too, once its first events show it is
// another trace, with an error that says so and names the other's file:
// give it a distinct name (clrdump: a distinct or absolute path). In a
// dataset without identities, which of the two it is is not known, and
// the error says that. Each version of an event is its
// own table, because versions add columns; engines read the versions
// together by name (DuckDB: read_parquet('DIR/events/*/event=GCStart*/*.parquet',
// union_by_name=true)), with NULL for the columns an older version lacks.
//
// Query one event table, or one event's versions, at a time, not every
// event table at once: DuckDB's union_by_name matches column names
// ignoring case and gives each column one type, so over
// events/*/*/*.parquet the fields of unrelated events whose names differ
// only in case are one column (the providerName of PerfView's
// ProviderEnableParameters, text, and Kernel-EventTracing's ProviderName,
// a UUID; its values, text, and the bulk GC events' Values, JSON; a few
// more: size, message, version, WorkID), and reading it fails
// (DuckDB: "Conversion Error") or mixes them. The
// header columns, the same in every table, read across all of them.
//
// # Columns
//
// Every row of an event table starts with the header columns (see
// HeaderColumns): trace (the name the trace was given by), seq (the
// event's index in the trace, in time order, as clrdump -format jsonl
// writes them), time (TIMESTAMP(NANOS, UTC); DuckDB reads it as
// TIMESTAMP WITH TIME ZONE, to the microsecond, dropping the rest, while
// Spark with nanosAsLong and ClickHouse, DateTime64(9), read the
// nanoseconds; it stays UTC, as local-time timestamps would mislead
// every engine, DuckDB's TIMESTAMP_NS included),
// event_id, event_version (the trace's, which may be newer than the
// table's when a newer runtime's event decoded as the newest known
// version), task, opcode, level, keywords, pid, tid, cpu (NULL where the
// trace does not record them), payload_size, activity and
// related_activity (UUID, NULL when zero), stack_id (the event's stack:
// a key of the stacks table with the same trace; NULL when the event has
// none, or when, in an ETW log, its stack was walked after it: see
// event_stacks), extra (payload bytes past the template, NULL when none). The payload's fields follow in template
// order, flattened as clrimpl/columns.go describes: integers by width and
// sign (Parquet INT(bits, signed)), pointers as UINT64, booleans, GUIDs
// as UUID, strings as UTF-8, a map-bound field as its number plus
// Field_name (its name, as the JSON lines write it), arrays and struct
// arrays as a JSON column with the JSON lines' array.
//
// The stacks table holds each distinct stack of a trace once: trace,
// stack_id (its key, numbered from 0 in the order the writer meets the
// stacks: an event's when its row is written, a walked one when its walk
// is matched to its event) and ips, the
// instruction pointers innermost first as a LIST of UINT64. Events share
// stacks (a trace of a million samples has thousands of stacks), so a row
// per event or per frame would be most of the dataset.
//
// The event_stacks table gives the stacks of an ETW log's events that the
// kernel or the runtime walked after logging them (CPU samples, the
// runtime's allocation ticks, exceptions, lock waits, disk I/O, …):
// trace, seq (the event's) and stack_id (a key of the stacks table). Such
// a stack is known only once the walks that follow the event, up to the
// log's end, have been read, after the event's row was written: join on
// trace and seq (coalesce(e.stack_id, w.stack_id)). A kernel walk names
// its event by its time and thread, so events logged together get the
// same stack.
//
// The tables of described events have the same header, then the
// description's fields flattened by the same rules (the Columns of the
// event's trace.Event.Descriptor), named as the trace names them; one whose name folds to a
// header column's, to a partition key's (provider or event, whose folder
// values DuckDB would put in its place: Provider_field, Event_field) or
// to an earlier column's gets "_field" appended (a map
// field's name column with it: level_field, level_field_name), and one
// without a name is "unnamed". Their versions share a table; a
// second layout of one event within a trace goes to the generic table.
//
// The kernel's events are rows of their types' tables like the CLR's
// (before, the events package etl parsed by hand, processes, threads,
// images, samples and stack walks, went to the generic table, and the
// others to tables named as the events are shown, TcpIp_SendIPV6): their
// columns are the fields TraceEvent shows, under its names, and extra is
// NULL, as the JSON lines show them (TraceEvent shows a kernel event's
// fields alone, whatever its version).
//
// The generic table holds, with the same header, provider, event, fields
// (JSON: {"payload":"0x…"} for an event nothing describes), and error and
// payload for an event that did not decode.
//
// The traces table holds a row per trace: trace, format, format_version,
// start_time, clock_frequency, pointer_size, pid (NULL for ETW logs,
// which hold many), processors, events, decode_errors, and what the reader
// skipped of a damaged or truncated trace: damaged_bytes (the bytes of
// the trace skipped; 0 when none were, which a trace not read whole can
// be too: an ETW log cut short between two buffers, an archive whose
// checksum fails) and damage (its message, naming the first damaged range
// and its offset, or what is missing; NULL when the whole trace was
// read: damage IS NULL is the test for a whole trace); then dropped, the
// events the trace's writer dropped (trace.Reader.Dropped), which the
// trace, whole or not, does not hold, and lost_buffers, the whole buffers
// of events an ETW session could not write (trace.Reader.LostBuffers; 0
// for other traces), whose events no count gives.
//
// # Files
//
// Each file is plain Parquet, written by this package from typed column
// arrays (parquet-go makes the schema, encodes levels and metadata, and
// reads the files in the tests): data pages v1, PLAIN values, strings
// RLE_DICTIONARY unless mostly distinct, seq and time
// DELTA_BINARY_PACKED, an integer column chunk of one value as a
// one-entry dictionary, statistics per column chunk (null counts, min and
// max of integers and of dictionary strings), no page indexes, every page
// compressed with Options.Compression. A trace's tables together hold at
// most Options.MemoryBudget bytes of rows: past it, the table holding
// the most writes them out as a row group (so a busy table's row groups
// are smaller than RowGroupRows), and the row groups' metadata beyond
// 64 KiB a table wait in a file beside it until the footer. The memory of
// a trace does not grow with its size, but for an ETW log's stack walks
// (their frames, and 32 bytes an event a walk named), kept to its end.
//
// # Writing, failures and interrupts
//
// A trace is in the dataset entirely or not at all: "written" means every
// file of the trace is in its table, complete. WriteTrace returns nil only
// then; after an error, a cancelled context or a crash, nothing of the
// trace is in any table. It writes the trace's files into a staging folder
// of its own, DIR/_clrevents_tmp/T-N/ (names that do not end in .parquet,
// in a folder engines skip), flushes them to disk, then commits them:
//
//  1. it creates DIR/_clrevents_tmp/T.commit, which fails when another
//     writer is committing the same trace under the same name, then
//     claims the trace's identity, creating DIR/_clrevents_tmp/ID.claim,
//     which waits while another writer is committing a copy of the trace
//     under another name (and fails if that writer has not finished in
//     10 seconds), and checks that the identity has no file and that no
//     file of the trace is in the dataset: of writers adding copies of a
//     trace at once, one commits it, and the others fail as the trace
//     already in the dataset;
//  2. it writes in T.commit the list of files to move, flushed to disk,
//     with a last line that tells a whole list from one cut short: the
//     commit point;
//  3. it renames each file into its table's folder, made if missing, the
//     identity's file and then the traces table last;
//  4. it removes the list, the claim and the staging folder.
//
// A cancelled context stops a trace until its commit begins (step 1), not
// after: the renames take milliseconds. A failed rename takes back the
// renames before it and the folders it made. A writer that stops dead
// (killed, crashed, out of power) leaves its staging folder, its claim if
// it got to it, and the list if it got to step 2; the next Create of the
// dataset completes the renames of each whole list (Recovered names those
// traces) and removes everything else in DIR/_clrevents_tmp, claims
// included. Until then, engines may see part of such a trace, and a
// writer adding a copy of it fails after waiting for its claim.
//
// Each writer holds a shared lock on DIR/_clrevents_tmp/lock from Create
// to Close, and Create clears leftovers only when it can take the lock
// exclusively: no live writer's staging folder is touched, and several
// processes may add traces to one dataset at once. (On platforms without
// file locks, plan9 and some others, one process at a time may.)
//
// Create makes DIR when it is missing, and the staging folder; the marker
// and the tables' folders appear with the first trace committed. Close
// removes the staging folder (unless another writer still uses it) and,
// when nothing was written, what Create made: a run that wrote nothing
// leaves the file system as it was. (A writer that stopped dead before
// writing anything leaves DIR, which the next Create leaves empty.)
package dataset

import (
	"archive/zip"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"

	// The CLR's event types: linked, they are among the tables a
	// trace.Reader decodes with by default (see the package doc).
	_ "github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/eventfmt"
	"github.com/clrgo/clrevents/trace"
)

// MarkerFile is the file at the root of a dataset that marks it as one.
const MarkerFile = "_clrevents_dataset"

// DefaultRowGroupRows is the default number of rows in a row group.
const DefaultRowGroupRows = 64 << 10

// DefaultMemoryBudget is the default Options.MemoryBudget.
const DefaultMemoryBudget = 4 << 20

// Options configure a dataset.
type Options struct {
	// Compression is "zstd" (the default), "snappy" or "none".
	Compression string
	// RowGroupRows is the most rows a table holds in memory before writing
	// them out as a row group; 0 means DefaultRowGroupRows.
	RowGroupRows int
	// MemoryBudget is about the most bytes of rows the tables of a trace
	// hold in memory before writing them out; 0 means
	// DefaultMemoryBudget. When the tables hold more, the one holding the
	// most writes its rows as a row group. It bounds the memory a trace
	// takes, whatever the trace's size and its number of tables; a
	// smaller budget makes smaller row groups, not other rows.
	MemoryBudget int

	// Append allows adding traces to a directory that already holds a
	// dataset.
	Append bool
}

// ErrExists is returned by Create for a directory that already holds a
// dataset when Options.Append is not set.
var ErrExists = errors.New("already holds a dataset (add traces to it with Options.Append; clrdump -append)")

// Dataset is a dataset being written. WriteTrace may be called
// concurrently, for different traces. Close it when done.
type Dataset struct {
	dir   string
	codec func() pageCodec // a trace's
	rows  int64
	mem   int64    // the memory budget of a trace
	tmp   string   // the staging folder
	lock  dirLock  // shared from Create to Close
	made  []string // the folders Create made, outermost first

	mu         sync.Mutex // commits one at a time, and the fields below
	closed     bool
	madeMarker bool
	recovered  []string

	// hook, when set (by tests), is called at each stage of writing a
	// trace: "open" (table i's file), "read" (every 1024 events, i the
	// next event's index), "commit" (all read, before the last look at
	// the context), "claim" (T.commit created), "journal" (its list
	// whole: the commit point), "rename" (before the rename of file i),
	// "renamed". An error fails the trace there.
	hook func(trace, stage string, i int) error
}

// Create opens the dataset at dir for writing, creating dir if needed. A
// directory holding a dataset with traces is an error (ErrExists) unless
// o.Append is set; a non-empty directory that is not a dataset is always
// an error, and neither is touched. Create completes or removes what
// writers that stopped (crashed, were killed) left in the dataset (see
// the package documentation), unless another writer is using the
// dataset.
func Create(dir string, o Options) (*Dataset, error) {
	d := &Dataset{dir: dir, rows: int64(o.RowGroupRows), tmp: filepath.Join(dir, tempDirName)}
	d.lock.path = filepath.Join(d.tmp, lockName)
	if d.rows <= 0 {
		d.rows = DefaultRowGroupRows
	}
	d.mem = int64(o.MemoryBudget)
	if d.mem <= 0 {
		d.mem = DefaultMemoryBudget
	}
	switch o.Compression {
	case "", "zstd":
		d.codec = newZstdCodec
	case "snappy":
		d.codec = func() pageCodec { return &snappy.Codec{} }
	case "none":
		d.codec = func() pageCodec { return &uncompressed.Codec{} }
	default:
		return nil, fmt.Errorf("dataset: unknown compression %q (want zstd, snappy or none)", o.Compression)
	}
	// Refused before anything is touched.
	if err := d.check(o.Append); err != nil {
		return nil, err
	}
	made, err := mkdirs(dir)
	d.made = made
	if err == nil {
		err = d.open()
		if err == nil {
			// Leftovers completed may have made it a dataset with traces.
			if err = d.check(o.Append); err != nil && len(d.recovered) > 0 {
				err = fmt.Errorf("%w; it holds %s, whose commit a writer that stopped had begun", err, strings.Join(d.recovered, ", "))
			}
		}
	}
	if err != nil {
		d.Close()
		if !strings.HasPrefix(err.Error(), "dataset: ") {
			err = fmt.Errorf("dataset: %w", err)
		}
		return nil, err
	}
	return d, nil
}

// check refuses a directory that holds something besides a dataset, and,
// without appendTo, one that holds a dataset with traces. A dataset
// without traces (a marker, empty folders) takes traces as a new one.
func (d *Dataset) check(appendTo bool) error {
	entries, err := os.ReadDir(d.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	marker, other := false, false
	for _, e := range entries {
		switch e.Name() {
		case MarkerFile:
			marker = true
		case tempDirName:
		default:
			other = true
		}
	}
	switch {
	case other && !marker:
		return fmt.Errorf("dataset: %s is not empty and holds no dataset (no %s)", d.dir, MarkerFile)
	case marker && !appendTo && d.holdsTraces():
		return fmt.Errorf("dataset: %s %w", d.dir, ErrExists)
	}
	return nil
}

// open takes the staging folder's lock: exclusive first, to clear what
// stopped writers left, when no other writer is alive; then shared.
func (d *Dataset) open() error {
	ok, err := d.lock.take(true, false)
	if err != nil {
		return err
	}
	if ok {
		if err := d.recoverLeftovers(); err != nil {
			return err
		}
		d.lock.unlock()
	}
	_, err = d.lock.take(false, true)
	return err
}

// Recovered names the traces that Create found half committed by a
// writer that stopped (crashed, was killed) during a commit, and put in
// the dataset. That writer did not report them written.
func (d *Dataset) Recovered() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.recovered...)
}

// Close ends writing: it waits for the commits under way, then removes
// the staging folder, unless another writer still uses it, and, when no
// trace is in the dataset, the marker and the folders Create made. Call
// it when every WriteTrace has returned; WriteTrace fails afterwards.
// Traces written are complete without Close; a process that ends without
// it leaves the staging folder, which the next Create removes.
func (d *Dataset) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	var err error
	if d.lock.f != nil {
		d.lock.unlock()
		if ok, _ := d.lock.take(true, false); ok {
			// The last writer.
			if d.madeMarker && !d.holdsTraces() {
				os.Remove(filepath.Join(d.dir, MarkerFile))
			}
			rerr := os.Remove(d.lock.path)
			if rerr != nil { // Windows: not while it is open
				d.lock.close()
				rerr = os.Remove(d.lock.path)
			}
			if rerr == nil || errors.Is(rerr, fs.ErrNotExist) {
				if rerr = os.Remove(d.tmp); errors.Is(rerr, fs.ErrNotExist) {
					rerr = nil
				}
			}
			if rerr != nil {
				err = fmt.Errorf("dataset: removing the staging folder: %w", rerr)
			}
		}
		d.lock.close()
	}
	removeEmpty(d.made)
	return err
}

// Dir is the dataset's directory.
func (d *Dataset) Dir() string { return d.dir }

// FileName is the name of the files a trace given by name becomes in each
// table: its base name without the dots and underscores it begins with
// (Spark, Hive and Trino skip files whose names begin with . or _), a
// hash of name, ".parquet".
func FileName(name string) string {
	return fileName(name, "._")
}

// fileName is FileName with the leading characters trimmed given: before,
// only dots were, and a trace given as _x.nettrace was in each table as
// _x.nettrace-….parquet (see legacyFile).
func fileName(name, trim string) string {
	h := fnv.New64a()
	h.Write([]byte(name))
	base := strings.Map(func(r rune) rune {
		if r < ' ' || strings.ContainsRune(`/\:*?"<>|=`, r) {
			return '_'
		}
		return r
	}, filepath.Base(name))
	return fmt.Sprintf("%s-%016x.parquet", strings.TrimLeft(base, trim), h.Sum64())
}

// Holds reports whether a trace added under name is in the dataset (its
// row in the traces table is committed), as WriteTrace names traces: by
// the name as given.
func (d *Dataset) Holds(name string) bool {
	if _, err := os.Stat(filepath.Join(d.dir, "traces", FileName(name))); err == nil {
		return true
	}
	if old := d.legacyFile(name); old != "" {
		if _, err := os.Stat(old); err == nil {
			return true
		}
	}
	return false
}

// legacyFile is the traces table's file of the trace given by name as
// versions before FileName trimmed underscores wrote it, when that name
// differs from FileName's (name's base begins with _ after its dots):
// such a trace in a dataset they wrote holds the name, "" otherwise.
func (d *Dataset) legacyFile(name string) string {
	if old := fileName(name, "."); old != FileName(name) {
		return filepath.Join(d.dir, "traces", old)
	}
	return ""
}

// Stats count what WriteTrace wrote.
type Stats struct {
	Events       int64 // rows in event and generic tables
	DecodeErrors int64 // events that did not decode (rows of generic with an error)
	Stacks       int64 // rows in the stacks table: distinct stacks
	// WalkedStacks counts rows in the event_stacks table: events of an
	// ETW log whose stacks were walked after them (walked.go).
	WalkedStacks int64
	Tables       int // files written
	// Dropped counts the events the trace's writer dropped (the runtime,
	// its session's buffer full; an ETW session, as its log header counts
	// them; trace.Reader.Dropped): not in the trace, so in no table.
	Dropped int64
	// LostBuffers counts the whole buffers an ETW session could not write
	// (its log header's BuffersLost; trace.Reader.LostBuffers), whose
	// events no count gives: not in the trace, nor in Dropped. 0 for
	// other traces.
	LostBuffers int64
	// Undecoded is nil, or an error that names the first few events that
	// did not decode and counts them (trace.ErrUndecoded).
	Undecoded error
	// Damage is nil, or the reader's *trace.DamageError when it skipped
	// damage (a damaged or truncated trace): the trace is in the dataset
	// with every event that could be read, and its traces row records
	// the damage (damaged_bytes, damage). For a zipped trace read whole
	// whose checksum or size the archive contradicts, it is that error
	// (zip.ErrChecksum, zip.ErrFormat; for a gzipped trace
	// gzip.ErrChecksum, or gzip.ErrHeader for bytes after it that are not
	// gzip): the row's damage names it, with
	// damaged_bytes 0, since where the bytes differ is not known.
	Damage error

	undecoded trace.DecodeErrors
}

// WriteTrace reads every event of src and writes the trace's files, under
// name (the trace column's value; usually the path it was opened from).
// It returns nil once the trace is in the dataset, entirely; on an error
// or when ctx is cancelled before the commit, nothing of it is (see
// "Writing, failures and interrupts"). Events that do not decode are rows
// of the generic table with an error, counted in Stats.DecodeErrors; they
// are not an error of WriteTrace. Nor is damage the reader skipped (a
// damaged or truncated trace): the trace is written with every event that
// could be read, and Stats.Damage says what was lost. A trace already in
// the dataset is an error, and so is another trace under a name the
// dataset has (see Layout), and the first damage of a reader opened with
// trace.WithStrict.
func (d *Dataset) WriteTrace(ctx context.Context, name string, src *trace.Reader) (Stats, error) {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return Stats{}, fmt.Errorf("%s: dataset %s is closed", name, d.dir)
	}
	tw := &traceWriter{d: d, name: name, file: FileName(name), tables: map[*clrimpl.Descriptor]*table{}, stackIDs: map[string]int64{}}
	stage, err := os.MkdirTemp(d.tmp, tw.file+"-*")
	if err != nil {
		return Stats{}, traceError(name, err)
	}
	tw.stage = stage
	tw.fl = newFlusher()
	tw.mem = newBudget(d.mem)
	tw.enc = &encoder{codec: d.codec()}
	st, err := tw.write(ctx, src)
	if err != nil {
		tw.abort()
		return st, traceError(name, err)
	}
	if err := tw.commit(ctx); err != nil {
		return st, traceError(name, err)
	}
	return st, nil
}

// traceError names the trace in err, unless err begins with its name (a
// trace reader's error names its file).
func traceError(name string, err error) error {
	if strings.HasPrefix(err.Error(), name+": ") {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

type traceWriter struct {
	d     *Dataset
	fl    *flusher // nil once stopped
	mem   *budget
	enc   *encoder // its flusher's
	name  string
	file  string
	stage string // the staging folder, which holds the files until the commit
	// tables are the tables of generated event types, by their descriptors.
	tables map[*clrimpl.Descriptor]*table
	// described are the tables of events the trace describes itself (an
	// ETW log's EventSource, TraceLogging and manifest-based providers),
	// by "provider/event" directories.
	described map[string]*describedTable
	byDesc    map[*clrimpl.Descriptor]*describedTable // nil for a description whose events go to generic
	check     []byte                                  // scratch for checking a described payload
	all       []*table                                // in creation order; traces last when committing
	generic,
	stacks *table
	buf []byte
	// derived holds an event's trace.Derived values (a kernel file
	// operation's FileName, ...), which follow its payload's columns;
	// buf2 is scratch for a string's bytes.
	derived []trace.Derived
	buf2    []byte
	// stackIDs numbers the distinct stacks by their bytes; stackKeys
	// holds the keys by number.
	stackIDs  map[string]int64
	stackKeys []string
	// recent remembers the stacks looked up last by where the reader
	// had them (see stackID).
	recent [64]recentStack
	id     identity // the trace's identity (identity.go)
	walks  *walks   // an ETW log's stack walks (walked.go); nil for other formats
}

// recentStack is a stack looked up: where its frames were, its bytes (a
// key of stackIDs) and its number.
type recentStack struct {
	at  uintptr
	key string
	id  int64
}

// newTable starts a table of the trace. A file of the table in place
// under the trace's name is an error once the trace's identity is known
// (see checkName); before, the table is made, and checkName checks it
// then.
func (tw *traceWriter) newTable(rel []string, name string, cols []column) (*table, error) {
	final := filepath.Join(append(append([]string{tw.d.dir}, rel...), tw.file)...)
	if tw.id.final != "" && exists(final) {
		return nil, tw.nameTaken(final)
	}
	i := len(tw.all)
	t := newTable(final, filepath.Join(tw.stage, strconv.Itoa(i)+".tmp"), name, cols, tw.enc, tw.d.rows, tw.fl, tw.mem,
		tw.at("open", i))
	tw.all = append(tw.all, t)
	return t, nil
}

func (tw *traceWriter) write(ctx context.Context, src *trace.Reader) (Stats, error) {
	var st Stats
	// The traces table first. Whether the trace's name is taken in the
	// dataset is checked with its identity, after its first events: the
	// same trace and another one under the same name are different
	// errors (checkName).
	traces, err := tw.newTable([]string{"traces"}, "traces", tracesColumns)
	if err != nil {
		return st, err
	}
	if tw.generic, err = tw.newTable([]string{"generic"}, "generic", genericColumns); err != nil {
		return st, err
	}
	if tw.stacks, err = tw.newTable([]string{"stacks"}, "stacks", stacksColumns); err != nil {
		return st, err
	}
	if src.Format() == trace.ETL {
		tw.walks = newWalks(src.Info().ClockFrequency)
	}
	var seq int64
	for {
		if seq&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			if err := tw.at("read", int(seq)); err != nil {
				return st, err
			}
		}
		e, err := src.Next()
		if err != nil {
			if err == io.EOF {
				break
			}
			var de *trace.DamageError
			switch {
			case errors.As(err, &de):
				// Every event that could be read is here: the trace is
				// written, and its row says what it lost.
				st.Damage = de
			case errors.Is(err, zip.ErrChecksum), errors.Is(err, zip.ErrFormat),
				errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader):
				// A zipped or gzipped trace read to its end whose member
				// the archive's checksum or size says is not what was read
				// (its compressed bytes are damaged where inflating went
				// on), or a gzip file with bytes after its trace that are
				// not gzip: written as a damaged trace is, its row naming
				// the check.
				st.Damage = err
			default:
				return st, err
			}
			break
		}
		if err := tw.event(e, seq, &st); err != nil {
			return st, err
		}
		if tw.walks != nil {
			tw.walks.add(e, seq)
		}
		if seq < identityEvents {
			tw.id.event(e)
		}
		seq++
		if seq == identityEvents {
			// Known now: a trace in the dataset already fails here,
			// not after the rest of it is written.
			if err := tw.id.make(tw.d.dir, src.Info()); err != nil {
				return st, err
			}
			if err := tw.checkName(); err != nil {
				return st, err
			}
		}
	}
	if tw.walks != nil {
		if err := tw.writeWalked(&st); err != nil {
			return st, err
		}
	}
	info := src.Info()
	if seq < identityEvents {
		if err := tw.id.make(tw.d.dir, info); err != nil {
			return st, err
		}
		if err := tw.checkName(); err != nil {
			return st, err
		}
	}
	t := traces
	t.begin()
	t.Bytes([]byte(tw.name))
	t.Bytes([]byte(info.Format.String()))
	t.Int(int64(info.Version))
	t.Int(info.StartTime.UnixNano())
	t.Int(info.ClockFrequency)
	t.Int(int64(info.PointerSize))
	optInt(t, info.ProcessID, info.ProcessID >= 0)
	t.Int(int64(info.NumProcessors))
	t.Int(st.Events)
	t.Int(st.DecodeErrors)
	var damaged int64
	var damage string
	if de, ok := st.Damage.(*trace.DamageError); ok {
		for _, d := range de.Damage {
			damaged += d.Length
		}
	}
	if st.Damage != nil {
		damage = st.Damage.Error()
	}
	t.Int(damaged)
	if damage != "" {
		t.Bytes([]byte(damage))
	} else {
		t.null()
	}
	st.Dropped = int64(src.Dropped())
	t.Int(st.Dropped)
	st.LostBuffers = int64(src.LostBuffers())
	t.Int(st.LostBuffers)
	if err := t.end(); err != nil {
		return st, err
	}
	st.Tables = len(tw.all)
	st.Undecoded = st.undecoded.Err()
	return st, nil
}

// event writes one event: a row of its type's table, or of generic, and
// its stack's frames.
func (tw *traceWriter) event(e *trace.Event, seq int64, st *Stats) error {
	st.Events++
	// As the JSON lines decode it: the kernel's events without extra.
	dec := eventfmt.Decode(e)
	ev, err := dec.Event, dec.Err
	if ev == nil && err == nil {
		err = clrimpl.ErrUnknownEvent
	}
	var t *table
	switch {
	case err == nil:
		desc := ev.Descriptor()
		tw.derived = e.AppendDerived(tw.derived[:0])
		t = tw.tables[desc]
		if t == nil {
			cols := desc.Columns
			if len(tw.derived) > 0 {
				cols = derivedColumns(cols, tw.derived)
			}
			t, err = tw.newTable([]string{"events", "provider=" + desc.Provider, "event=" + desc.Name},
				desc.Name, eventColumns(cols))
			if err != nil {
				return err
			}
			t.derived = len(tw.derived)
			tw.tables[desc] = t
		}
		if len(tw.derived) != t.derived {
			return fmt.Errorf("event %d: %s: %d derived values, its table's first event had %d", seq, desc.Name, len(tw.derived), t.derived)
		}
		t.begin()
		if err := tw.header(t, e, seq, dec.Extra, st); err != nil {
			return err
		}
		ev.AppendColumns(t)
		for _, d := range tw.derived {
			if d.IsInt {
				t.Int(d.Int)
			} else {
				tw.buf2 = append(tw.buf2[:0], d.Str...)
				t.Bytes(tw.buf2)
			}
		}
	default:
		if errors.Is(err, clrimpl.ErrUnknownEvent) {
			dt, ok, derr := tw.describedRow(e, seq, st)
			if derr != nil {
				return derr
			}
			if ok {
				t = dt
				break
			}
		}
		t = tw.generic
		t.begin()
		if err := tw.header(t, e, seq, nil, st); err != nil {
			return err
		}
		tw.genericFields(t, e, err, st)
	}
	if err := t.end(); err != nil {
		return fmt.Errorf("event %d: %w", seq, err)
	}
	return nil
}

// derivedColumns are a generated type's columns and then those of its
// events' trace.Derived values: strings, or int64s.
func derivedColumns(payload []clrimpl.Column, ds []trace.Derived) []clrimpl.Column {
	cols := append(make([]clrimpl.Column, 0, len(payload)+len(ds)), payload...)
	for _, d := range ds {
		kind := clrimpl.ColumnString
		if d.IsInt {
			kind = clrimpl.ColumnInt64
		}
		cols = append(cols, clrimpl.Column{Name: d.Name, Kind: kind})
	}
	return cols
}

func (tw *traceWriter) nameBytes() []byte {
	if len(tw.buf) != len(tw.name) {
		tw.buf = []byte(tw.name)
	}
	return tw.buf
}

// header appends the header columns.
func (tw *traceWriter) header(t *table, e *trace.Event, seq int64, extra []byte, st *Stats) error {
	stack := int64(-1)
	if s := e.Stack(); len(s) > 0 {
		id, err := tw.stackID(s, st)
		if err != nil {
			return err
		}
		stack = id
	}
	t.appendHeader(&headerRow{
		trace:    tw.nameBytes(),
		seq:      seq,
		time:     e.Time().UnixNano(),
		id:       int32(e.ID()),
		version:  int32(e.Version()),
		task:     int32(e.Task()),
		opcode:   int32(e.Opcode()),
		level:    int32(e.Level()),
		keywords: int64(e.Keywords()),
		pid:      e.ProcessID(),
		tid:      e.ThreadID(),
		cpu:      int32(e.CPU()),
		size:     int32(len(e.Payload())),
		activity: e.ActivityID(),
		related:  e.RelatedActivityID(),
		stack:    stack,
		extra:    extra,
	})
	return nil
}

// stackID is the key of the stack in the stacks table, which gets a row
// when the stack is new.
//
// The events that share a stack get the same frames from the reader (its
// stack table's row), so the stack looked up last at an address is
// likely the one there again: comparing its bytes is cheaper than hashing
// them and probing the map. The bytes are compared, not only the address:
// the reader reuses its stack table for other stacks.
func (tw *traceWriter) stackID(stack []uint64, st *Stats) (int64, error) {
	// The stack's own bytes are the key (in this process's byte order).
	at := unsafe.SliceData(stack)
	k := unsafe.Slice((*byte)(unsafe.Pointer(at)), 8*len(stack))
	r := &tw.recent[uintptr(unsafe.Pointer(at))/8%uintptr(len(tw.recent))]
	if r.at == uintptr(unsafe.Pointer(at)) && r.key == string(k) {
		return r.id, nil
	}
	if id, ok := tw.stackIDs[string(k)]; ok {
		*r = recentStack{at: uintptr(unsafe.Pointer(at)), key: tw.stackKeys[id], id: id}
		return id, nil
	}
	id := int64(len(tw.stackIDs))
	key := string(k)
	tw.stackIDs[key] = id
	tw.stackKeys = append(tw.stackKeys, key)
	*r = recentStack{at: uintptr(unsafe.Pointer(at)), key: key, id: id}
	s := tw.stacks
	s.begin()
	s.Bytes(tw.nameBytes())
	s.Int(id)
	s.uintList(stack)
	st.Stacks++
	return id, s.end()
}

// genericFields appends provider, event, fields, error and payload: as
// clrdump -format jsonl writes them.
func (tw *traceWriter) genericFields(t *table, e *trace.Event, decodeErr error, st *Stats) {
	name := e.Name()
	if name == "" {
		name = "id" + strconv.Itoa(int(e.ID())) + "/v" + strconv.Itoa(int(e.Version()))
	}
	t.Bytes([]byte(e.Provider()))
	t.Bytes([]byte(name))
	if !errors.Is(decodeErr, clrimpl.ErrUnknownEvent) {
		st.DecodeErrors++
		st.undecoded.AddEvent(e, decodeErr)
		t.null()
		t.Bytes([]byte(decodeErr.Error()))
		t.Bytes(e.Payload())
		return
	}
	// As clrdump -format jsonl writes them: the fields from the trace's
	// metadata, else the payload in hex.
	var dec eventfmt.Decoded
	out := eventfmt.AppendFields(t.Scratch(), e, &dec, true)
	if dec.Err != nil { // a payload that does not match its metadata
		st.DecodeErrors++
		st.undecoded.AddEvent(e, dec.Err)
		t.null()
		t.Bytes([]byte(dec.Err.Error()))
		t.Bytes(e.Payload())
		return
	}
	t.Bytes(out)
	t.null()
	t.null()
}

func optInt(t *table, v int64, ok bool) {
	if ok {
		t.Int(v)
	} else {
		t.null()
	}
}

// commit finishes every file and, unless ctx was cancelled meanwhile,
// moves them into the dataset (commitFiles); on an error nothing of the
// trace is in the dataset.
func (tw *traceWriter) commit(ctx context.Context) error {
	var err error
	for _, t := range tw.all {
		if err = tw.fl.send(job{t: t, b: t.cur, last: true}); err != nil {
			break
		}
	}
	if serr := tw.stopFlusher(); err == nil {
		err = serr
	}
	if err == nil {
		err = tw.at("commit", 0)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		tw.abort()
		return err
	}
	d := tw.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		tw.abort()
		return fmt.Errorf("dataset %s was closed", d.dir)
	}
	keep, err := tw.commitFiles()
	if err != nil && !keep {
		tw.abort()
	}
	return err
}

// stopFlusher waits for the flusher to finish what it was sent.
func (tw *traceWriter) stopFlusher() error {
	if tw.fl == nil {
		return nil
	}
	err := tw.fl.stop()
	tw.fl = nil
	return err
}

// abort closes the trace's files and removes its staging folder.
func (tw *traceWriter) abort() {
	tw.stopFlusher()
	for _, t := range tw.all {
		t.abort()
	}
	os.RemoveAll(tw.stage)
}
