package dataset

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/trace"
)

const small = "../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"

// TestNoNameClash: no payload column of any event type equals a header
// column in any case (DuckDB and Spark fold case), and within a table
// names are unique.
func TestNoNameClash(t *testing.T) {
	for _, info := range clrevents.Events() {
		seen := map[string]bool{}
		for _, c := range eventColumns(info.Columns) {
			k := strings.ToLower(c.name)
			if seen[k] {
				t.Errorf("%s: column %s twice (case folded)", info.Name, c.name)
			}
			seen[k] = true
		}
	}
}

// TestFileName: stable, distinct for distinct paths with one base name,
// and safe as a file name.
func TestFileName(t *testing.T) {
	a, b := FileName("fleet/a/trace.nettrace"), FileName("fleet/b/trace.nettrace")
	if a == b || a != FileName("fleet/a/trace.nettrace") {
		t.Errorf("FileName: %s, %s", a, b)
	}
	if !strings.HasPrefix(a, "trace.nettrace-") || !strings.HasSuffix(a, ".parquet") {
		t.Errorf("FileName = %s", a)
	}
	if n := FileName(`..\x:y=z`); strings.ContainsAny(n, `\:=`) || strings.HasPrefix(n, ".") {
		t.Errorf("FileName = %s", n)
	}
	// Spark, Hive and Trino skip files whose names begin with _ or .
	for _, name := range []string{"_app.nettrace", "fleet/__x.nettrace", "._x.nettrace", "_.x.nettrace", "_", "."} {
		if n := FileName(name); strings.HasPrefix(n, "_") || strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".parquet") {
			t.Errorf("FileName(%q) = %s", name, n)
		}
	}
	if a, b := FileName("fleet/_app.nettrace"), FileName("fleet/app.nettrace"); a == b || !strings.HasPrefix(a, "app.nettrace-") {
		t.Errorf("FileName: %s, %s", a, b)
	}
}

// TestUnderscoreName: a trace whose file name begins with _ is in each
// table under a name that does not; in a dataset that versions trimming
// only dots wrote (the trace's files named _app.nettrace-….parquet, and,
// before identities, no identity), adding it again under the same name
// is refused, and another trace is added beside it.
func TestUnderscoreName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	d, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const name = "fleet/_app.nettrace"
	if err := writeAs(t, d, name, small); err != nil {
		t.Fatal(err)
	}
	d.Close()
	got := files(t, dir)
	if len(got) == 0 {
		t.Fatal("no files")
	}
	for _, p := range got {
		if b := filepath.Base(p); strings.HasPrefix(b, "_") || !strings.HasPrefix(b, "app.nettrace-") {
			t.Errorf("%s: want app.nettrace-….parquet", p)
		}
	}

	// The dataset as versions before wrote it.
	old := "_" + FileName(name)
	for _, p := range got {
		if err := os.Rename(p, filepath.Join(filepath.Dir(p), old)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, IdentityDir)); err != nil {
		t.Fatal(err)
	}
	_, err = Create(dir, Options{})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("Create without append over the old dataset: %v, want ErrExists", err)
	}
	d, err = Create(dir, Options{Append: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	before := snapshot(t, dir)
	if err := writeAs(t, d, name, small); err == nil || !strings.Contains(err.Error(), "("+filepath.Join(dir, "traces", old)+" exists) with no identity") {
		t.Errorf("adding %s again: %v, want it refused naming traces/%s", name, err, old)
	}
	sameTree(t, "after the trace was refused", before, snapshot(t, dir))
	if err := writeAs(t, d, "fleet/_other.nettrace", checkpoint); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(dir, "traces", FileName("fleet/_other.nettrace"))) {
		t.Errorf("no traces file %s", FileName("fleet/_other.nettrace"))
	}
}

func writeSmall(t *testing.T, d *Dataset, ctx context.Context) (Stats, error) {
	t.Helper()
	src, err := trace.Open(small)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	return d.WriteTrace(ctx, small, src)
}

// files lists the files under dir but the marker, the staging folder and
// the traces' identities: the tables' files.
func files(t *testing.T, dir string) []string {
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() && (fi.Name() == tempDirName || fi.Name() == IdentityDir) {
			return filepath.SkipDir
		}
		if err == nil && !fi.IsDir() && fi.Name() != MarkerFile {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestCreateAndAppend(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := Create(dir, Options{Compression: "lz5"}); err == nil {
		t.Error("unknown compression accepted")
	}
	d, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := writeSmall(t, d, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Events == 0 || st.Tables < 4 || len(files(t, dir)) != st.Tables {
		t.Errorf("stats %+v, files %v", st, files(t, dir))
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dir, Options{}); !errors.Is(err, ErrExists) {
		t.Errorf("Create over a dataset: %v", err)
	}
	d, err = Create(dir, Options{Append: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writeSmall(t, d, context.Background()); err == nil || !strings.Contains(err.Error(), "already in the dataset") {
		t.Errorf("the same trace twice: %v", err)
	}
	if n := len(files(t, dir)); n != st.Tables {
		t.Errorf("%d files after a refused append, want %d", n, st.Tables)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(dir, tempDirName)) {
		t.Errorf("Close left %s", tempDirName)
	}
}

// TestCancel: a cancelled write leaves no file, temporary or final, and
// after Close no directory either.
func TestCancel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	d, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := writeSmall(t, d, ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if f := files(t, dir); len(f) > 0 {
		t.Errorf("files left: %v", f)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(dir) {
		t.Errorf("%s exists after a run that wrote nothing", dir)
	}
}

// TestAllocsPerEvent: writing a trace allocates per table (the Parquet
// writer's setup, most of it), per distinct stack, per row group and per
// page, not per event: fewer than one allocation an event over the 27,951
// events and 20 tables of the SampleProfiler trace (0.68 when written
// with parquet-go's writer, 0.29 with ours); BenchmarkParquetExport
// measures 0.08 on the 62 MB trace.
func TestAllocsPerEvent(t *testing.T) {
	const name = "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"
	var events int64
	allocs := testing.AllocsPerRun(2, func() {
		d, err := Create(filepath.Join(t.TempDir(), "ds"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		src, err := trace.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		st, err := d.WriteTrace(context.Background(), name, src)
		if err != nil {
			t.Fatal(err)
		}
		events = st.Events
	})
	if per := allocs / float64(events); per >= 1 {
		t.Errorf("%.0f allocations for %d events: %.2f an event", allocs, events, per)
	} else {
		t.Logf("%.0f allocations for %d events: %.3f an event", allocs, events, per)
	}
}

// TestWriteFailure: a table whose file cannot be created (the fifth
// table's, a failure the hook injects) fails the trace with an error
// naming the file, after the flusher has finished, and leaves nothing; a
// later write of the trace succeeds.
func TestWriteFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	d, err := Create(dir, Options{RowGroupRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	injected := errors.New("injected failure")
	d.hook = func(_, stage string, i int) error {
		if stage == "open" && i == 4 {
			return injected
		}
		return nil
	}
	_, err = writeSmall(t, d, context.Background())
	if err == nil || !errors.Is(err, injected) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), small) {
		t.Fatalf("err = %v, want one naming the trace and a file in %s, wrapping the failure", err, dir)
	}
	t.Log(err)
	if f := all(t, dir); len(f) > 0 {
		t.Errorf("left in %s: %v", dir, f)
	}
	d.hook = nil
	st, err := writeSmall(t, d, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(files(t, dir)); n != st.Tables {
		t.Errorf("%d files, want %d", n, st.Tables)
	}
}

// TestAbandon: a row taken back leaves each column with one value per
// ended row, whatever column it stopped at, and the file holds only the
// ended rows.
func TestAbandon(t *testing.T) {
	dir := t.TempDir()
	fl := newFlusher()
	cols := describedColumns([]clrimpl.Column{{Name: "A", Kind: clrimpl.ColumnUint32}, {Name: "PID", Kind: clrimpl.ColumnString}})
	if cols[len(cols)-1].name != "PID_field" {
		t.Errorf("a field named like a header column: %s", cols[len(cols)-1].name)
	}
	tb := newTable(filepath.Join(dir, "x.parquet"), filepath.Join(dir, "0.tmp"), "x", cols, nil, 1000, fl, nil, nil)
	row := func(stop int) {
		tb.begin()
		for i, c := range cols {
			if i == stop {
				tb.abandon()
				return
			}
			switch {
			case c.optional:
				tb.null()
			case c.kind == clrimpl.ColumnString || c.kind == clrimpl.ColumnBinary:
				tb.Bytes([]byte("s"))
			case c.kind == clrimpl.ColumnGUID:
				tb.GUID(clrimpl.GUID{})
			case c.kind.Signed():
				tb.Int(1)
			default:
				tb.Uint(1)
			}
		}
		if err := tb.end(); err != nil {
			t.Fatal(err)
		}
	}
	for stop := range cols {
		row(-1)
		row(stop)
	}
	for i := range cols {
		if n := levels(tb, i); n != tb.cur.rows {
			t.Fatalf("column %s: %d values for %d rows", cols[i].name, n, tb.cur.rows)
		}
	}
	if err := fl.send(job{t: tb, b: tb.cur, last: true}); err != nil {
		t.Fatal(err)
	}
	if err := fl.stop(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(tb.tmp)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if pf.NumRows() != int64(len(cols)) {
		t.Errorf("%d rows in the file, want %d", pf.NumRows(), len(cols))
	}
}

// levels is the number of levels (values and nulls) column i of the
// table's current rows holds.
func levels(tb *table, i int) int {
	c := &tb.cur.cols[i]
	if tb.cols[i].optional || tb.cols[i].list {
		return len(c.defs)
	}
	switch tb.phys[i] {
	case physBool:
		return len(c.bools)
	case physInt32:
		return len(c.i32)
	case physInt64:
		return len(c.i64)
	case physFloat:
		return len(c.f32)
	case physDouble:
		return len(c.f64)
	case physUUID:
		return len(c.data) / 16
	default:
		return len(c.spans)
	}
}

// TestAppendHeader: the header's fast path puts one value (or null) in
// each header column, in the array of the column's type, as the column by
// column calls do.
func TestAppendHeader(t *testing.T) {
	fl := newFlusher()
	defer fl.stop()
	for _, null := range []bool{false, true} {
		tb := newTable("x", "y", "x", genericColumns, nil, 1000, fl, nil, errors.New("not opened"))
		slow := newTable("x", "y", "x", genericColumns, nil, 1000, fl, nil, errors.New("not opened"))
		h := headerRow{trace: []byte("t"), seq: 1, time: 2, id: 3, version: 4, task: 5, opcode: 6, level: 7,
			keywords: 8, pid: 9, tid: 10, cpu: 11, size: 12, activity: clrimpl.GUID{1}, related: clrimpl.GUID{2},
			stack: 13, extra: []byte("e")}
		if null {
			h.pid, h.tid, h.cpu, h.stack = -1, -1, -1, -1
			h.activity, h.related, h.extra = clrimpl.GUID{}, clrimpl.GUID{}, nil
		}
		tb.begin()
		tb.appendHeader(&h)
		slow.begin()
		slow.Bytes(h.trace)
		for _, v := range []int64{h.seq, h.time, int64(h.id), int64(h.version), int64(h.task), int64(h.opcode), int64(h.level), h.keywords} {
			slow.Int(v)
		}
		optInt(slow, h.pid, !null)
		optInt(slow, h.tid, !null)
		optInt(slow, int64(h.cpu), !null)
		slow.Int(int64(h.size))
		optGUID(slow, h.activity)
		optGUID(slow, h.related)
		optInt(slow, h.stack, !null)
		if null {
			slow.null()
		} else {
			slow.Bytes(h.extra)
		}
		if tb.col != len(headerColumns) || slow.col != len(headerColumns) || slow.bad != nil {
			t.Fatalf("at column %d and %d (%v), want %d", tb.col, slow.col, slow.bad, len(headerColumns))
		}
		for i := range headerColumns {
			if !reflect.DeepEqual(tb.cur.cols[i], slow.cur.cols[i]) {
				t.Errorf("null=%v: column %s: %+v, want %+v", null, headerColumns[i].name, tb.cur.cols[i], slow.cur.cols[i])
			}
		}
	}
}

// optGUID appends g, or null for the zero GUID, as a column by column
// caller would.
func optGUID(t *table, g clrimpl.GUID) {
	if g.IsZero() {
		t.null()
	} else {
		t.GUID(g)
	}
}

// TestScratchGrows: a value appended to the Scratch buffer past its size
// (a JSON column of a big bulk event: a heap snapshot's GCBulkEdge is 64
// KB of payload) grows it, so the next such value allocates nothing; and
// a row taken back takes its bytes with it.
func TestScratchGrows(t *testing.T) {
	fl := newFlusher()
	defer fl.stop()
	cols := describedColumns([]clrimpl.Column{{Name: "Values", Kind: clrimpl.ColumnJSON}})
	tb := newTable("x", "y", "x", cols, nil, 1000, fl, newBudget(4<<20), errors.New("not opened"))
	big := bytes.Repeat([]byte("[1,2,3]"), 20000) // 140,000 bytes, over the 64 KiB scratch
	name := []byte("t")
	row := func() {
		tb.begin()
		tb.appendHeader(&headerRow{trace: name, pid: -1, tid: -1, cpu: -1, stack: -1})
		v := append(tb.Scratch(), big...)
		tb.Bytes(v)
		if tb.col != len(cols) || tb.bad != nil {
			t.Fatalf("at column %d of %d: %v", tb.col, len(cols), tb.bad)
		}
		tb.abandon()
	}
	row()
	if c := cap(tb.Scratch()); c < len(big) {
		t.Errorf("Scratch holds %d bytes after a value of %d", c, len(big))
	}
	if allocs := testing.AllocsPerRun(10, row); allocs != 0 {
		t.Errorf("a row with a %d-byte value allocates %v times", len(big), allocs)
	}
}

// TestDescribedColumnNames: a map field renamed for a clash with a header
// column keeps its name column beside it (level_field, level_field_name;
// it was level_name), and a column without a name, which engines refuse,
// gets one.
func TestDescribedColumnNames(t *testing.T) {
	cols := describedColumns([]clrimpl.Column{
		{Name: "level", Kind: clrimpl.ColumnUint32}, {Name: "level_name", Kind: clrimpl.ColumnString},
		{Name: "", Kind: clrimpl.ColumnUint32}, {Name: "", Kind: clrimpl.ColumnUint32},
		{Name: "Reason", Kind: clrimpl.ColumnUint32}, {Name: "Reason_name", Kind: clrimpl.ColumnString},
	})
	var got []string
	for _, c := range cols[len(headerColumns):] {
		got = append(got, c.name)
	}
	want := []string{"level_field", "level_field_name", "unnamed", "unnamed_field", "Reason", "Reason_name"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("columns %q, want %q", got, want)
	}
}

// TestDescribedPartitionKeys: a field named like a hive partition key of
// the table's folders (provider=…/event=…), in any case, is renamed as
// one named like a header column, since DuckDB would read the folder's
// value in its place.
func TestDescribedPartitionKeys(t *testing.T) {
	cols := describedColumns([]clrimpl.Column{
		{Name: "Event", Kind: clrimpl.ColumnString}, {Name: "Provider", Kind: clrimpl.ColumnString},
		{Name: "EVENT_field", Kind: clrimpl.ColumnString}, {Name: "Count", Kind: clrimpl.ColumnInt32},
	})
	var got []string
	for _, c := range cols[len(headerColumns):] {
		got = append(got, c.name)
	}
	want := []string{"Event_field", "Provider_field", "EVENT_field_field", "Count"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("columns %q, want %q", got, want)
	}
}
