package trace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	kflate "github.com/klauspost/compress/flate"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/internal/readbuf"
	"github.com/clrgo/clrevents/internal/ziptrace"
	"github.com/clrgo/clrevents/nettrace"
)

// Format is a trace file format.
type Format uint8

// The formats Open and NewReader recognise.
const (
	UnknownFormat Format = iota
	// NetPerf is the .NET Core 2.0 and 2.1 EventPipe layout (.netperf):
	// a FastSerialization stream without the Nettrace magic.
	NetPerf
	// NetTrace is the EventPipe layout of .NET Core 3.0 and later
	// (.nettrace): the "Nettrace" magic, then format version 4, 5 or 6.
	NetTrace
	// ETL is a Windows ETW log (.etl).
	ETL
)

var formatNames = [...]string{UnknownFormat: "unknown", NetPerf: "netperf", NetTrace: "nettrace", ETL: "etl"}

// String returns "netperf", "nettrace", "etl" or "unknown".
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "unknown"
}

// Errors that Open and NewReader wrap, with the input's name in front.
var (
	// ErrEmpty: the input holds no bytes.
	ErrEmpty = errors.New("empty input: no bytes to read")
	// ErrFormat: the input is none of the formats this package reads.
	ErrFormat = errors.New("not a trace: the formats read are EventPipe .nettrace and .netperf, Windows ETW .etl, and a .zip or .gz holding one of them")
)

// Order is the order in which a Reader delivers events.
type Order uint8

const (
	// TimeOrder delivers events by timestamp, as TraceEvent does: NetTrace
	// V4+ events are sorted between sequence points, ETL buffers are merged
	// across processors. It is the default.
	TimeOrder Order = iota
	// FileOrder delivers events as the file stores them. It holds nothing
	// back, and an ETL log arriving through a pipe is then read once,
	// front to back, instead of being spooled to a temporary file first.
	// An ETL log read from a file (or a zip, or spooled) is read in
	// TimeOrder whatever was asked, and Reader.Order says so: its
	// processors' buffers are merged so that each event has the process
	// and the description the log gives before it in time, which in
	// stored order may come later (package etl's NewFileOrderReader over
	// the file reads it as stored).
	FileOrder
	// ThreadOrder delivers the events each thread logged in time order,
	// the threads' events interleaved as cheaply as the format allows: an
	// EventPipe trace as the file stores it (the runtime writes each
	// thread's events in order, so nothing is held back or merged; the
	// SampleProfiler's samples of other threads are in the order the
	// sampling thread logged them), an ETL log by timestamp, as in
	// TimeOrder (a thread's events are spread over the processors'
	// buffers). It is the order for consumers that follow threads, not
	// the whole trace, such as profile.Build.
	ThreadOrder
)

// String returns "time", "file" or "thread".
func (o Order) String() string {
	switch o {
	case FileOrder:
		return "file"
	case ThreadOrder:
		return "thread"
	}
	return "time"
}

// An Option changes how Open and NewReader read.
type Option func(*config)

type config struct {
	order   Order
	name    string
	tempDir string
	memMax  int64
	exact   bool
	strict  bool
	// singleLog: an ETL file is read alone, without the logs beside it.
	singleLog bool
	// tables are WithEvents', when tablesSet.
	tables    []*clrimpl.Table
	tablesSet bool
}

// WithOrder chooses the event order; TimeOrder is the default.
func WithOrder(o Order) Option { return func(c *config) { c.order = o } }

// WithName sets the name that errors give for the input (NewReader's
// default is "input"; Open's is the path).
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithTempDir sets the directory for temporary copies (a zip or an ETL log
// that arrives through a pipe, a large ETL member of a zip); the default is
// os.TempDir(). Close removes them.
func WithTempDir(dir string) Option { return func(c *config) { c.tempDir = dir } }

// WithSingleLog makes Open read an ETL file alone. By default the logs
// written beside it are read with it, merged by time, as TraceEvent reads
// them: X.etl with X.kernel*.etl, X.clr*.etl and X.user*.etl in the same
// folder (see etl.Siblings), which PerfView and Visual Studio
// write before (or instead of) merging them into one file. An archive
// holding several logs is read whole either way.
func WithSingleLog() Option { return func(c *config) { c.singleLog = true } }

// Siblings returns the files Open reads as one trace when given name:
// name, then, for an ETW log X.etl, the X.kernel*.etl, X.clr*.etl and
// X.user*.etl beside it (etl.Siblings), which Open merges with it unless
// WithSingleLog is given. A program given many files (a dataset's
// export) can leave those out that another is read with.
func Siblings(name string) ([]string, error) { return etl.Siblings(name) }

// defaultMemMax is the largest spooled input kept in memory; larger ones go
// to a temporary file.
const defaultMemMax = 32 << 20

func newConfig(name string, opts []Option) *config {
	c := &config{name: name, memMax: defaultMemMax}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Open opens a trace file: a .nettrace, .netperf or .etl file, a .zip
// archive holding exactly one of them (PerfView's .etl.zip and
// .nettrace.zip), or one of them gzipped (.nettrace.gz, .etl.gz; a file of
// several gzip members reads as their content one after the other, as
// gunzip gives it). The format is recognised from the first bytes, not from the
// name. An archive cut short (a download or copy that stopped) has lost its
// directory, which is at its end: the trace member is then found from its
// local header, and its events before the cut are read, ending as a trace
// cut short does (a *DamageError). Most damage to a member's compressed
// bytes does not stop inflating: the output is garbled for a while and what
// follows comes earlier or later than it was; the format reader skips the
// garbage as damage and reads on. Damage that stops inflating is read past
// from the next deflate block that decodes (that block's output is lost, and
// the copies the next blocks make from it come out wrong: damage, which the
// format reader skips). A checksum or size of the member that does not match
// (after damage, it cannot) ends the trace after its events (the error named
// in the *DamageError, or returned by Next). A gzip file is read alike: its
// trailers' checksums and sizes are its checks, and one cut short is a trace
// cut short. A path that is not a regular file (a FIFO, /dev/stdin) is read
// as a stream, as by NewReader. Close releases the file and removes any
// temporary copy.
//
// ETW logs written side by side are read as one, merged by time, as
// TraceEvent's ETWTraceEventSource reads them: an X.etl file together with
// the X.kernel*.etl, X.clr*.etl and X.user*.etl files beside it (see
// etl.Siblings; WithSingleLog reads the one file), and an archive holding
// several .etl files and no other trace (a Visual Studio .diagsession's
// logs). Event.Offset and Damage.Offset are then positions in their own
// log, which raw.ETL(e).Log and the damage's error name.
func Open(name string, opts ...Option) (*Reader, error) {
	c := newConfig(name, opts)
	f, err := os.Open(name)
	if err != nil {
		return nil, err // *PathError names the file
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	if !st.Mode().IsRegular() {
		r, err := newStreamReader(f, c)
		if err != nil {
			f.Close()
			return nil, err
		}
		r.closers = append(r.closers, f.Close)
		return r, nil
	}
	r, err := openFile(f, st.Size(), c)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// NewReader reads a trace from r, which may be a pipe or a network stream:
// it is read sequentially and never seeked. The format is recognised from
// the first bytes. An EventPipe stream is decoded as it arrives, and in
// TimeOrder each event is handed out as soon as the stream's IsSorted marks
// show that no earlier event can follow (within about one of the runtime's
// 100 ms batches; see nettrace.Reader.SetLowLatency), so a live session's
// events come without waiting for the next sequence point; an input that
// is all there already (a *bytes.Reader, a *strings.Reader, an *os.File of
// a regular file) is read as Open reads a file, the events between two
// sequence points merged at once, which costs about 2% less. A zip archive, a
// gzip file, and an ETL log in TimeOrder, are first copied to memory or a
// temporary file (they need random access). If r is an io.Closer, Close does
// not close it.
func NewReader(r io.Reader, opts ...Option) (*Reader, error) {
	c := newConfig("input", opts)
	return newStreamReader(r, c)
}

// sniffLen is how many leading bytes recognise every format: an ETL log's
// first buffer header (72 bytes) and the first event's 8-byte head.
const sniffLen = 80

// sniff names the format of a file from its first bytes; an archive (a
// zip or a gzip file, whose content is the trace) is reported separately.
func sniff(b []byte) (f Format, isZip bool) {
	switch {
	case len(b) >= 4 && string(b[:4]) == "PK\x03\x04", ziptrace.IsGzip(b):
		return UnknownFormat, true
	case len(b) >= 8 && string(b[:8]) == "Nettrace":
		return NetTrace, false
	case len(b) >= 24 && binary.LittleEndian.Uint32(b) == 20 && string(b[4:24]) == "!FastSerialization.1":
		return NetPerf, false
	case len(b) >= 80 && isETLHead(b):
		return ETL, false
	}
	return UnknownFormat, false
}

// isETLHead reports whether b starts like an ETL log: a 72-byte buffer
// header, then the kernel EventTrace header event, a SYSTEM_TRACE_HEADER
// (32- or 64-bit) with the trace-header marker flags and hook id 0.
func isETLHead(b []byte) bool {
	const at = 72
	typ, marker := b[at+2], b[at+3]
	hook := binary.LittleEndian.Uint16(b[at+6:])
	return (typ == 1 || typ == 2) && marker&0xC0 == 0xC0 && hook == 0
}

func formatError(name string, b []byte) error {
	if len(b) == 0 {
		return fmt.Errorf("%s: %w", name, ErrEmpty)
	}
	if c := compressor(b); c != "" {
		return fmt.Errorf("%s: %w; it is compressed with %s, which is not: decompress it first", name, ErrFormat, c)
	}
	return fmt.Errorf("%s: %w", name, ErrFormat)
}

// compressor names the compression of a file that starts with b, for
// the compressors whose output this package does not read, or "".
func compressor(b []byte) string {
	for _, c := range []struct{ magic, name string }{
		{"\x28\xb5\x2f\xfd", "zstd"},
		{"\xfd7zXZ\x00", "xz"},
		{"BZh", "bzip2"},
		{"7z\xbc\xaf\x27\x1c", "7-Zip"},
		{"\x04\x22\x4d\x18", "LZ4"},
		{"Rar!\x1a\x07", "RAR"},
	} {
		if strings.HasPrefix(string(b), c.magic) {
			return c.name
		}
	}
	return ""
}

// openFile opens a regular file: it can be read at any offset.
func openFile(f *os.File, size int64, c *config) (*Reader, error) {
	head := make([]byte, sniffLen)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	head = head[:n]
	format, isZip := sniff(head)
	if isZip {
		return openZip(f, size, c, []func() error{f.Close})
	}
	switch format {
	case NetPerf, NetTrace:
		nr, err := nettrace.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		return newNetTrace(nr, format, c, f.Close), nil
	case ETL:
		if !c.singleLog {
			// The logs written beside it are read with it, as
			// TraceEvent reads them (etl.Siblings).
			if names, err := etl.Siblings(f.Name()); err == nil && len(names) > 1 {
				f.Close()
				er, err := etl.Open(f.Name())
				if err != nil {
					return nil, fmt.Errorf("%s: %w", c.name, err)
				}
				return newETL(er, c), nil
			}
		}
		return newETLAt(f, size, c, f.Close)
	}
	return nil, formatError(c.name, head)
}

// complete reports whether src holds all it will ever hold: bytes in
// memory, or a regular file (read to its end, a file still being written
// ends where its writer stood). Anything else may be live.
func complete(src io.Reader) bool {
	switch s := src.(type) {
	case *bytes.Reader, *strings.Reader:
		return true
	case *os.File:
		st, err := s.Stat()
		return err == nil && st.Mode().IsRegular()
	}
	return false
}

// newStreamReader reads a stream that cannot seek.
func newStreamReader(src io.Reader, c *config) (*Reader, error) {
	br := readbuf.Get(src)
	// "Nettrace" is recognised from 8 bytes: a live session's stream
	// may pause after a header shorter than sniffLen.
	head, err := br.Peek(8)
	if err == nil && string(head) != "Nettrace" {
		head, err = br.Peek(sniffLen)
	}
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	format, isZip := sniff(head)
	switch {
	case isZip:
		sp, err := ziptrace.Spool(br, -1, c.memMax, c.tempDir, c.name)
		readbuf.Put(br) // copied out
		if err != nil {
			return nil, err
		}
		r, err := openZip(sp, sp.Size, c, []func() error{sp.Close})
		if err != nil {
			sp.Close()
			return nil, err
		}
		return r, nil
	case format == NetPerf || format == NetTrace:
		// nettrace reads br itself, and gives it back at the end.
		nr, err := nettrace.NewReader(&readbuf.Handoff{R: br})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		// A stream may be live (a diagnostics session, a pipe from
		// one): release events as soon as the format's ordering marks
		// allow, not at the next sequence point. One that is all there
		// already (in memory, a regular file) is read as Open reads a
		// file, a stretch between sequence points at a time.
		if !complete(src) {
			nr.SetLowLatency(true)
		}
		return newNetTrace(nr, format, c), nil
	case format == ETL:
		if c.order == FileOrder {
			er, err := etl.NewFileOrderReader(br)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
			return newETL(er, c), nil
		}
		sp, err := ziptrace.Spool(br, -1, c.memMax, c.tempDir, c.name)
		readbuf.Put(br) // copied out
		if err != nil {
			return nil, err
		}
		r, err := newETLAt(sp, sp.Size, c, sp.Close)
		if err != nil {
			sp.Close()
			return nil, err
		}
		return r, nil
	}
	return nil, formatError(c.name, head)
}

func newETLAt(ra io.ReaderAt, size int64, c *config, closers ...func() error) (*Reader, error) {
	er, err := etl.NewReaderAt(ra, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	return newETL(er, c, closers...), nil
}

// traceExts are the member names a zip may hold a trace under.
var traceExts = []string{".nettrace", ".netperf", ".etl"}

// openZip opens the one trace inside a zip archive. closers release the
// archive when the Reader is closed (or at once, for an ETL member that
// was copied out).
func openZip(ra io.ReaderAt, size int64, c *config, closers []func() error) (*Reader, error) {
	// klauspost/compress inflates a member about 1.2 times as fast as
	// compress/flate (ziptrace's BenchmarkInflate).
	zf, err := ziptrace.FindInflate(ra, size, c.name, kflate.NewReader, traceExts...)
	if err != nil {
		return nil, err
	}
	if zf.Logs != nil {
		return openLogs(zf.Logs, c, closers)
	}
	member := zf.Where(c.name)
	rc, err := zf.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", member, err)
	}
	br := bufio.NewReaderSize(rc, 64<<10)
	head, peekErr := br.Peek(sniffLen)
	format, isZip := sniff(head)
	mc := *c
	mc.name = member
	switch {
	case isZip:
		rc.Close()
		return nil, fmt.Errorf("%s: an archive inside an archive is not read", member)
	case format == NetPerf || format == NetTrace:
		nr, err := nettrace.NewReader(br)
		if err != nil {
			rc.Close()
			return nil, fmt.Errorf("%s: %w", member, err)
		}
		r := newNetTrace(nr, format, &mc, append([]func() error{rc.Close}, closers...)...)
		// The trace can end (its end tag) before the member's data:
		// the archive's size and checksum are checked when the rest is
		// read, which would otherwise never be. A mismatch means bytes
		// the format reader took as sound were not. (The rest is read
		// from the member, not br: nettrace takes br for its own buffer
		// and gives it to readbuf's pool at the end.)
		r.finish = func() error { return ziptrace.Finish(rc) }
		return r, nil
	case format == ETL:
		// ETL needs random access for time order: expand the member,
		// then let the archive go.
		er, sp, stop, err := expandLog(br, zf.Size, c, member)
		rc.Close()
		if err != nil {
			return nil, err
		}
		r := newETL(er, &mc, append([]func() error{sp.Close}, closers...)...)
		r.stopped = stop
		return r, nil
	}
	rc.Close()
	archive := "archive"
	if zf.Gzip {
		archive = "gzip file"
	}
	switch {
	case errors.Is(peekErr, io.ErrUnexpectedEOF) && !zf.Salvaged && !zf.Gzip:
		return nil, fmt.Errorf("%s: the member holds fewer bytes than the archive's directory says: %w", member, peekErr)
	case errors.Is(peekErr, io.ErrUnexpectedEOF) && len(head) == 0:
		return nil, fmt.Errorf("%s: the %s is cut short before the member's first byte: %w", member, archive, peekErr)
	case errors.Is(peekErr, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("%s: the %s is cut short after %d bytes of the member: %w", member, archive, len(head), peekErr)
	case peekErr != nil && peekErr != io.EOF:
		return nil, fmt.Errorf("%s: %w", member, peekErr)
	}
	return nil, formatError(member, head)
}

// openLogs reads the several ETL logs of an archive (a Visual Studio
// diagnostics session's) as one, merged by time (etl.Merge). Each member
// is expanded first, as one log member is; closers release the archive
// when the Reader is closed.
func openLogs(found []*ziptrace.Found, c *config, closers []func() error) (*Reader, error) {
	var logs []*etl.Reader
	var own []func() error // the expanded copies
	var stops []error
	fail := func(err error) (*Reader, error) {
		for _, l := range logs {
			l.Close()
		}
		for _, f := range own {
			f()
		}
		return nil, err
	}
	for _, zf := range found {
		member := zf.Where(c.name)
		rc, err := zf.Open()
		if err != nil {
			return fail(fmt.Errorf("%s: %w", member, err))
		}
		er, sp, stop, err := expandLog(rc, zf.Size, c, member)
		rc.Close()
		if err != nil {
			return fail(err)
		}
		own = append(own, sp.Close)
		if stop != nil {
			stops = append(stops, fmt.Errorf("%s: %w", member, stop))
		}
		er.SetName(member)
		logs = append(logs, er)
	}
	er, err := etl.Merge(logs...)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", c.name, err))
	}
	r := newETL(er, c, append(own, closers...)...)
	r.stopped = errors.Join(stops...)
	return r, nil
}

// expandLog expands an archive's ETL member read from src into a copy that
// can be read at any offset (hint, the size the archive states, is never
// trusted) and opens it. The data ends where the member's fails (a cut, a
// checksum): what came before is read, and stop is that failure, for the
// trace's end. On an error the copy is released.
func expandLog(src io.Reader, hint int64, c *config, member string) (er *etl.Reader, sp *ziptrace.Spooled, stop, err error) {
	data, stopped := ziptrace.UntilError(src)
	sp, err = ziptrace.Spool(data, hint, c.memMax, c.tempDir, member)
	if err != nil {
		return nil, nil, nil, err
	}
	er, err = etl.NewReaderAt(sp, sp.Size)
	stop = stopped()
	if err != nil {
		sp.Close()
		if stop != nil {
			err = stop
		}
		return nil, nil, nil, fmt.Errorf("%s: %w", member, err)
	}
	return er, sp, stop, nil
}
