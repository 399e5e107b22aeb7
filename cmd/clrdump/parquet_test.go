package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/dataset"
	"github.com/clrgo/clrevents/internal/eventfmt"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/trace"
)

// parquetRow is one row read back: its values by column name.
type parquetRow map[string]parquet.Value

// eachRow reads a Parquet file with the Parquet library and calls f with
// every row and the columns' names by index.
func eachRow(t *testing.T, path string, f func(row parquet.Row, names []string)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var names []string
	for _, c := range pf.Schema().Columns() {
		names = append(names, c[0])
	}
	buf := make([]parquet.Row, 64)
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		for {
			n, err := rows.ReadRows(buf)
			for _, row := range buf[:n] {
				f(row, names)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		rows.Close()
	}
}

// readParquet reads every row of a Parquet file with the Parquet library,
// one value per column (the LIST of the stacks table needs readStackRows).
func readParquet(t *testing.T, path string) []parquetRow {
	t.Helper()
	var out []parquetRow
	eachRow(t, path, func(row parquet.Row, names []string) {
		m := parquetRow{}
		for _, v := range row {
			m[names[v.Column()]] = v.Clone()
		}
		out = append(out, m)
	})
	return out
}

// jsonOf writes a column value as the JSON lines write the field (kind and
// hex from the schema's column).
func jsonOf(col clrevents.Column, v parquet.Value) string {
	switch {
	case v.IsNull():
		return "null"
	case col.Kind.Unsigned():
		u := v.Uint64()
		if col.Kind.Bits() < 64 {
			u = uint64(v.Uint32()) & (1<<col.Kind.Bits() - 1)
		}
		if col.Hex {
			return `"0x` + strconv.FormatUint(u, 16) + `"`
		}
		return strconv.FormatUint(u, 10)
	case col.Kind.Signed():
		i := v.Int64()
		if col.Kind.Bits() < 64 {
			i = int64(v.Int32())
		}
		if col.Hex {
			return `"0x` + strconv.FormatUint(uint64(i)&(1<<col.Kind.Bits()-1), 16) + `"`
		}
		return strconv.FormatInt(i, 10)
	}
	switch col.Kind {
	case clrimpl.ColumnBool:
		return strconv.FormatBool(v.Boolean())
	case clrimpl.ColumnFloat32:
		return string(clrimpl.AppendJSONFloat(nil, float64(v.Float())))
	case clrimpl.ColumnFloat64:
		return string(clrimpl.AppendJSONFloat(nil, v.Double()))
	case clrimpl.ColumnGUID:
		return `"` + guidText(v.ByteArray()) + `"`
	case clrimpl.ColumnString:
		return string(clrimpl.AppendJSONString(nil, string(v.ByteArray())))
	case clrimpl.ColumnBinary:
		return `"0x` + hex.EncodeToString(v.ByteArray()) + `"`
	case clrimpl.ColumnJSON:
		return string(v.ByteArray())
	}
	return "?" + col.Kind.String()
}

// guidText is a UUID's bytes (big-endian) in text form.
func guidText(b []byte) string {
	if len(b) != 16 {
		return fmt.Sprintf("bad uuid %x", b)
	}
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

var headerJSON = map[string]struct {
	key  string
	kind clrimpl.ColumnKind
}{
	"event_id": {"id", clrimpl.ColumnUint16}, "event_version": {"version", clrimpl.ColumnUint8},
	"task": {"task", clrimpl.ColumnUint16}, "opcode": {"opcode", clrimpl.ColumnUint8}, "level": {"level", clrimpl.ColumnUint8},
	"payload_size": {"size", clrimpl.ColumnInt32}, "cpu": {"cpu", clrimpl.ColumnInt32},
	"provider": {"provider", clrimpl.ColumnString}, "event": {"event", clrimpl.ColumnString},
	"fields": {"fields", clrimpl.ColumnJSON}, "error": {"error", clrimpl.ColumnString},
	"payload": {"payload", clrimpl.ColumnBinary}, "extra": {"extra", clrimpl.ColumnBinary},
	"activity": {"activity", clrimpl.ColumnGUID}, "related_activity": {"related_activity", clrimpl.ColumnGUID},
}

// eventInfos finds an event type by the provider and name its table is
// under: clrevents' by provider and manifest symbol, kernelevents' by the
// provider its events are shown under and its name (their JSON lines
// name them by the type's display name).
func eventInfos() map[[2]string]eventInfo {
	m := map[[2]string]eventInfo{}
	for _, info := range clrevents.Events() {
		m[[2]string{info.Provider.String(), info.Name}] = eventInfo{info.Columns, info.Name}
	}
	for _, info := range kernelevents.Events() {
		d := info.Descriptor()
		m[[2]string{d.Provider, d.Name}] = eventInfo{d.Columns, d.DisplayName}
	}
	return m
}

// eventInfo is a table's columns and the name its events' JSON lines
// give them.
type eventInfo struct {
	cols []clrimpl.Column
	name string
}

// checkRoundTrip writes trace into a fresh dataset and checks that every
// row read back equals its JSON line, field by field, and that every JSON
// line has its row.
func checkRoundTrip(t *testing.T, trace string) {
	t.Helper()
	jsonl, errs, code := dump(t, "-format", "jsonl", trace)
	if code != exitOK {
		t.Fatalf("jsonl: exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(jsonl, "\n"), "\n")
	dir := filepath.Join(t.TempDir(), "ds")
	if _, errs, code := dump(t, "-format", "parquet", "-o", dir, trace); code != exitOK {
		t.Fatalf("parquet: exit %d: %s", code, errs)
	}
	infos := eventInfos()
	described := describedColumns(t, trace, len(lines))
	seen := make([]bool, len(lines))
	stackOf := make([]int64, len(lines)) // the stack column, -1 for NULL
	file := dataset.FileName(trace)
	// check compares the rows of a table with the JSON lines: for an event
	// table, the header and the columns colsOf gives for the row's event;
	// for the generic table (colsOf nil), the header.
	check := func(path string, colsOf func(seq int) []clrevents.Column, provider, event string, inPath bool) {
		for _, row := range readParquet(t, path) {
			seq := int(row["seq"].Int64())
			if seq < 0 || seq >= len(lines) || seen[seq] {
				t.Fatalf("%s: seq %d out of range or repeated", path, seq)
			}
			seen[seq] = true
			stackOf[seq] = -1
			if v := row["stack_id"]; !v.IsNull() {
				stackOf[seq] = v.Int64()
			}
			var want map[string]json.RawMessage
			if err := json.Unmarshal([]byte(lines[seq]), &want); err != nil {
				t.Fatal(err)
			}
			var diffs []string
			expect := func(key, got string) {
				w, ok := want[key]
				if !ok {
					w = json.RawMessage("null")
				}
				if got != string(w) {
					diffs = append(diffs, fmt.Sprintf("%s = %s, JSON %s", key, got, w))
				}
			}
			if got := row["trace"].String(); got != trace {
				diffs = append(diffs, "trace "+got)
			}
			expect("time", `"`+string(eventfmt.AppendTime(nil, time.Unix(0, row["time"].Int64())))+`"`)
			expect("keywords", `"0x`+strconv.FormatUint(row["keywords"].Uint64(), 16)+`"`)
			for _, k := range []string{"pid", "tid"} {
				got := "-1"
				if v := row[k]; !v.IsNull() {
					got = strconv.FormatInt(v.Int64(), 10)
				}
				expect(k, got)
			}
			for name, h := range headerJSON {
				if v, ok := row[name]; ok {
					expect(h.key, jsonOf(clrevents.Column{Kind: h.kind}, v))
				}
			}
			if colsOf != nil {
				if inPath { // the names as a directory holds them
					var p, e string
					json.Unmarshal(want["provider"], &p)
					json.Unmarshal(want["event"], &e)
					if dirName(p) != provider || dirName(e) != event {
						diffs = append(diffs, fmt.Sprintf("in directories provider=%s/event=%s", provider, event))
					}
				} else {
					expect("provider", strconv.Quote(provider))
					expect("event", strconv.Quote(event))
				}
				var fields map[string]json.RawMessage
				if err := json.Unmarshal(want["fields"], &fields); err != nil {
					t.Fatalf("seq %d: fields: %v", seq, err)
				}
				for _, col := range colsOf(seq) {
					name, isName := strings.CutSuffix(col.Name, "_name")
					colName := col.Name
					switch {
					case isHeader(colName):
						colName += "_field" // the dataset's name for a field named like a header column
					case isName && isHeader(name):
						colName = name + "_field_name" // and its map's name column beside it
					}
					got := jsonOf(col, row[colName])
					if isName {
						got = jsonOf(clrevents.Column{Kind: clrimpl.ColumnString}, row[colName])
					} else if len(fields[name]) > 0 && fields[name][0] == '"' && !col.Hex && col.Kind != clrimpl.ColumnString &&
						col.Kind != clrimpl.ColumnGUID && col.Kind != clrimpl.ColumnBinary {
						continue // the number of a map-bound field: JSON has its name, checked by Field_name
					}
					if got != string(fields[name]) {
						diffs = append(diffs, fmt.Sprintf("field %s = %s, JSON %s", col.Name, got, fields[name]))
					}
					delete(fields, name)
				}
				for name, v := range fields {
					// A value TraceEvent derives from other events
					// (trace.Derived: a file operation's FileName) is a
					// column after the payload's: a string, or an int64.
					col, ok := row[name]
					if !ok {
						diffs = append(diffs, "JSON field "+name+" has no column")
						continue
					}
					kind := clrimpl.ColumnString
					if len(v) > 0 && v[0] != '"' {
						kind = clrimpl.ColumnInt64
					}
					if got := jsonOf(clrevents.Column{Kind: kind}, col); got != string(v) {
						diffs = append(diffs, fmt.Sprintf("derived field %s = %s, JSON %s", name, got, v))
					}
				}
			}
			if len(diffs) > 0 {
				t.Fatalf("%s seq %d:\n%s\nJSON: %s", path, seq, strings.Join(diffs, "\n"), lines[seq])
			}
		}
	}
	events, _ := filepath.Glob(filepath.Join(dir, "events", "provider=*", "event=*", file))
	for _, path := range events {
		event := strings.TrimPrefix(filepath.Base(filepath.Dir(path)), "event=")
		provider := strings.TrimPrefix(filepath.Base(filepath.Dir(filepath.Dir(path))), "provider=")
		if info, ok := infos[[2]string{provider, event}]; ok {
			check(path, func(int) []clrevents.Column { return info.cols }, provider, info.name, false)
			continue
		}
		// A table of events the trace describes itself: each row's columns
		// are its event's description's.
		check(path, func(seq int) []clrevents.Column {
			cols, ok := described[seq]
			if !ok {
				t.Fatalf("%s: row %d is not a described event", path, seq)
			}
			return cols
		}, provider, event, true)
	}
	check(filepath.Join(dir, "generic", file), nil, "", "", false)
	if len(described) > 0 {
		t.Logf("%d events of described tables checked", len(described))
	}
	for seq, ok := range seen {
		if !ok {
			t.Fatalf("JSON line %d has no row: %s", seq, lines[seq])
		}
	}
	checkStacks(t, trace, filepath.Join(dir, "stacks", file), stackOf)
	// The trace's row counts every event.
	tr := readParquet(t, filepath.Join(dir, "traces", file))
	if len(tr) != 1 || tr[0]["events"].Int64() != int64(len(lines)) {
		t.Errorf("traces table: %d rows, events %v; want 1 row, %d", len(tr), tr[0]["events"], len(lines))
	}
	if _, err := os.Stat(filepath.Join(dir, "_clrevents_tmp")); err == nil {
		t.Errorf("the staging folder is left")
	}
}

// describedColumns gives, by JSON line, the payload columns of the events
// that package dataset gives a table from the trace's own description (an
// ETW log's, an EventPipe event's metadata) or etl's kernel layouts.
func describedColumns(t *testing.T, name string, n int) map[int][]clrevents.Column {
	t.Helper()
	r, err := trace.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[int][]clrevents.Column{}
	for seq := 0; ; seq++ {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Decode(); !errors.Is(err, clrevents.ErrUnknownEvent) {
			continue
		}
		if d := e.Descriptor(); d != nil {
			if _, err := d.Fields.AppendJSON(nil, e.Payload(), e.PointerSize()); err == nil {
				out[seq] = d.Columns
			}
		}
	}
	return out
}

// dirName is a name as a dataset directory holds it.
func dirName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == '=' || r == ':' || r < 0x20 {
			return '_'
		}
		return r
	}, s)
}

// isHeader reports whether name is a header column's in any case.
func isHeader(name string) bool {
	for _, h := range dataset.HeaderColumns() {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// TestParquetRoundTrip: the small real traces in testdata, on any clone.
func TestParquetRoundTrip(t *testing.T) {
	for _, name := range []string{
		"../../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip",
		"../../testdata/traces/gcevents.etl.zip",
		"../../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip",
		"../../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
	} {
		t.Run(filepath.Base(name), func(t *testing.T) { checkRoundTrip(t, name) })
	}
}

// TestParquetRoundTripShared: every shared trace.
func TestParquetRoundTripShared(t *testing.T) {
	dir := "../../../shared/fixtures/traces"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("../shared/fixtures is not beside the checkout (CI has it): ", err)
	}
	if testing.Short() {
		t.Skip("-short: the shared traces take a minute")
	}
	var traces []string
	for _, pat := range []string{"*/*.zip", "*/*.nettrace"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		traces = append(traces, m...)
	}
	if len(traces) < 9 {
		t.Fatalf("found %d shared traces: %v", len(traces), traces)
	}
	for _, name := range traces {
		t.Run(filepath.Base(name), func(t *testing.T) { checkRoundTrip(t, name) })
	}
}

// TestParquetManyAndAppend: many traces in one run, then -append, then the
// errors: an existing dataset without -append, a trace already in it,
// flags that do not apply.
func TestParquetManyAndAppend(t *testing.T) {
	a := "../../testdata/traces/gcevents.etl.zip"
	b := "../../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"
	c := "../../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"
	dir := filepath.Join(t.TempDir(), "ds")
	if _, errs, code := dump(t, "-format", "parquet", "-o", dir, a, b); code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, errs, code := dump(t, "-format", "parquet", "-o", dir, c); code != exitUsage || !strings.Contains(errs, "already holds a dataset") {
		t.Errorf("existing dataset without -append: exit %d, %q", code, errs)
	}
	if _, errs, code := dump(t, "-format", "parquet", "-append", "-o", dir, c); code != exitOK {
		t.Fatalf("-append: exit %d: %s", code, errs)
	}
	if _, errs, code := dump(t, "-format", "parquet", "-append", "-o", dir, a); code != exitError || !strings.Contains(errs, "already in the dataset") {
		t.Errorf("a trace twice: exit %d, %q", code, errs)
	}
	traces, _ := filepath.Glob(filepath.Join(dir, "traces", "*.parquet"))
	if len(traces) != 3 {
		t.Errorf("%d traces, want 3: %v", len(traces), traces)
	}
	if _, err := os.Stat(filepath.Join(dir, "_clrevents_tmp")); err == nil {
		t.Errorf("the staging folder is left")
	}
	for _, args := range [][]string{
		{"-format", "parquet", a},                                       // no -o
		{"-format", "parquet", "-o", dir + "2", "-pid", "1", a},         // a filter
		{"-format", "jsonl", "-append", a},                              // -append without parquet
		{"-format", "parquet", "-o", dir + "3", "-compression", "x", a}, // bad codec
	} {
		if _, _, code := dump(t, args...); code == exitOK {
			t.Errorf("%v: exit 0", args)
		}
	}
	// A non-empty directory that is no dataset is refused.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "x"), nil, 0o644)
	if _, errs, code := dump(t, "-format", "parquet", "-append", "-o", other, a); code == exitOK || !strings.Contains(errs, "holds no dataset") {
		t.Errorf("non-dataset directory: exit %d, %q", code, errs)
	}
}

// newTestFlagSet has the flags parquetFlags.run looks at besides its own.
func newTestFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("clrdump", flag.ContinueOnError)
	fs.String("format", "text", "")
	addProfileFlags(fs)
	return fs
}

// checkStacks: the stack of every event, read from the trace again, is
// the row of the stacks table its stack_id column names, and stacks are
// distinct.
func checkStacks(t *testing.T, name, path string, stackOf []int64) {
	t.Helper()
	stacks := map[int64][]uint64{}
	distinct := map[string]bool{}
	for _, row := range readStackRows(t, path) {
		stacks[row.id] = row.ips
		k := fmt.Sprint(row.ips)
		if distinct[k] {
			t.Errorf("stack %d repeats %v", row.id, row.ips)
		}
		distinct[k] = true
	}
	src, err := trace.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	withStacks := 0
	for seq := 0; ; seq++ {
		e, err := src.Next()
		if err == io.EOF {
			if seq != len(stackOf) {
				t.Errorf("%d events, %d JSON lines", seq, len(stackOf))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want := e.Stack()
		id := stackOf[seq]
		if len(want) == 0 {
			if id != -1 {
				t.Fatalf("seq %d: no stack, stack column %d", seq, id)
			}
			continue
		}
		withStacks++
		if got, ok := stacks[id]; !ok || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seq %d: stack %d = %v, the trace has %v", seq, id, got, want)
		}
	}
	t.Logf("%d events with stacks, %d distinct stacks", withStacks, len(stacks))
}

type stackRow struct {
	id  int64
	ips []uint64
}

// readStackRows reads the stacks table.
func readStackRows(t *testing.T, path string) []stackRow {
	t.Helper()
	var out []stackRow
	eachRow(t, path, func(row parquet.Row, names []string) {
		var s stackRow
		for _, v := range row {
			switch names[v.Column()] {
			case "stack_id":
				s.id = v.Int64()
			case "ips":
				s.ips = append(s.ips, v.Uint64())
			}
		}
		out = append(out, s)
	})
	return out
}

// Failures and interrupts: a trace is in the dataset entirely or not at
// all, and clrdump's last lines say which.

// sampleTrace has 27,951 events in 20 tables: long enough to be stopped
// in the middle.
const sampleTrace = "../../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"

// cutTrace writes the SampleProfiler trace cut in a block, which fails
// after about 17,000 events, and a file that is no trace.
func cutTrace(t *testing.T) (cut, garbage string) {
	t.Helper()
	b, err := os.ReadFile(sampleTrace)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cut, garbage = filepath.Join(dir, "cut.nettrace"), filepath.Join(dir, "garbage.nettrace")
	if err := os.WriteFile(cut, b[:200000], 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(garbage, []byte("not a trace\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	return cut, garbage
}

// eventCount is how many events a trace has, read again.
func eventCount(t *testing.T, name string) int64 {
	t.Helper()
	r, err := trace.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var n int64
	for {
		if _, err := r.Next(); err == io.EOF {
			return n
		} else if err != nil {
			t.Fatal(err)
		}
		n++
	}
}

// filesOf are the files of the trace given by name in the dataset.
func filesOf(dir, name string) []string {
	want := dataset.FileName(name)
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Name() == want {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// checkWritten fails unless the trace given by name is in the dataset
// entirely: every file reads, the event and generic tables have a row
// per event of the trace, and the traces table its row.
func checkWritten(t *testing.T, dir, name string) {
	t.Helper()
	files := filesOf(dir, name)
	var rows int64
	traceRows := 0
	for _, p := range files {
		r := readParquet(t, p)
		rel, _ := filepath.Rel(dir, p)
		switch strings.Split(filepath.ToSlash(rel), "/")[0] {
		case "events", "generic":
			rows += int64(len(r))
		case "traces":
			traceRows += len(r)
		}
	}
	if want := eventCount(t, name); rows != want || traceRows != 1 {
		t.Errorf("%s: %d files, %d event rows, %d trace rows; want %d event rows and 1 trace row", name, len(files), rows, traceRows, want)
	}
}

// checkNotWritten fails unless nothing of the trace is in the dataset.
func checkNotWritten(t *testing.T, dir, name string) {
	t.Helper()
	if f := filesOf(dir, name); len(f) > 0 {
		t.Errorf("%s: not written, but in the dataset: %v", name, f)
	}
}

// summary reads clrdump's last lines: the traces written and not.
func summary(stderr string) (written, notWritten []string) {
	for _, line := range strings.Split(stderr, "\n") {
		if name, ok := strings.CutPrefix(line, "clrdump: written: "); ok {
			written = append(written, name)
		} else if name, ok := strings.CutPrefix(line, "clrdump: not written: "); ok {
			notWritten = append(notWritten, name)
		}
	}
	return written, notWritten
}

// checkReport fails unless the summary names every trace once, says
// written exactly of want, and the dataset agrees: the written traces
// whole, the others absent, the staging folder gone.
func checkReport(t *testing.T, dir, stderr string, names, want []string) {
	t.Helper()
	written, notWritten := summary(stderr)
	if !slices.Equal(written, want) || len(written)+len(notWritten) != len(names) {
		t.Errorf("written %v, not written %v; want written %v of %v\n%s", written, notWritten, want, names, stderr)
	}
	for _, name := range names {
		if slices.Contains(want, name) {
			checkWritten(t, dir, name)
		} else {
			checkNotWritten(t, dir, name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "_clrevents_tmp")); err == nil {
		t.Error("the staging folder is left")
	}
}

// treeOf is every file and folder under dir, a file with its size and
// SHA-256.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if fi.IsDir() {
			out[filepath.ToSlash(rel)] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = fmt.Sprintf("%d %x", len(b), sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// parquetRun runs -format parquet with an interrupt context and a number
// of traces at once (0: one per processor).
func parquetRun(t *testing.T, p *parquetFlags, args ...string) (string, int) {
	t.Helper()
	fs := newTestFlagSet()
	pq := addParquetFlags(fs)
	pq.interrupt, pq.workers, pq.afterTrace = p.interrupt, p.workers, p.afterTrace
	if pq.interrupt == nil {
		pq.interrupt = context.Background()
	}
	if err := fs.Parse(append([]string{"-format", "parquet"}, args...)); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := pq.run(fs, "parquet", p.reading, &stderr)
	return stderr.String(), code
}

// TestParquetBadPaths: a path that is not a file, among good ones, writes
// nothing, and the directory is not created; a trace given twice is a
// usage error.
func TestParquetBadPaths(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	missing := filepath.Join(t.TempDir(), "missing.nettrace")
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{gcETL, missing, small}, exitError, "missing.nettrace: no such file"},
		{[]string{gcETL, t.TempDir()}, exitError, "is a directory"},
		{[]string{gcETL, small, gcETL}, exitUsage, "given twice"},
		{[]string{"-rowgroup", "0", gcETL}, exitUsage, "-rowgroup 0: want a number of rows, at least 1"},
		{[]string{"-rowgroup", "-5", gcETL}, exitUsage, "-rowgroup -5: want a number of rows"},
	} {
		args := append([]string{"-o", dir}, c.args...)
		if c.args[0] == "-rowgroup" { // flags before -o's trace arguments
			args = append(c.args[:2:2], append([]string{"-o", dir}, c.args[2:]...)...)
		}
		errs, code := parquetRun(t, &parquetFlags{}, args...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errs, c.code, c.msg)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%v: %s was created", c.args, dir)
		}
	}
}

// TestParquetFailures: into a new directory, the only trace failing part
// way (cut short, read with -strict) leaves no directory; traces that fail
// among good ones written two at a time (one cut short, first and later,
// one no trace) leave nothing, and the last lines name exactly the traces
// written, which are whole.
func TestParquetFailures(t *testing.T) {
	cut, garbage := cutTrace(t)
	dir := filepath.Join(t.TempDir(), "ds")
	errs, code := parquetRun(t, &parquetFlags{reading: reading{strict: true}}, "-o", dir, cut)
	if code != exitError || !strings.Contains(errs, "offset") || strings.Count(errs, "clrdump: "+cut+": ") != 1 {
		t.Errorf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s was created for a trace that failed", dir)
	}
	checkReport(t, dir, errs, []string{cut}, nil)
	t.Log(errs)

	for _, workers := range []int{1, 2} {
		dir := filepath.Join(t.TempDir(), "ds")
		names := []string{cut, gcETL, garbage, sampleTrace, arrays, small}
		errs, code := parquetRun(t, &parquetFlags{workers: workers, reading: reading{strict: true}}, append([]string{"-o", dir}, names...)...)
		if code != exitError || !strings.Contains(errs, "4 of 6 traces written") || !strings.Contains(errs, "not a trace") {
			t.Errorf("exit %d: %s", code, errs)
		}
		checkReport(t, dir, errs, names, []string{gcETL, sampleTrace, arrays, small})
		// The failed traces do not block the next run: -append adds a
		// good one.
		if errs, code := parquetRun(t, &parquetFlags{}, "-o", dir, "-append", checkpointTrace(t)); code != exitOK {
			t.Errorf("-append after failures: exit %d: %s", code, errs)
		}
	}
}

// checkpointTrace is a copy, under a new name, of a small trace that the
// runs above do not add (a copy of one they add is that trace, which a
// dataset refuses).
func checkpointTrace(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../testdata/traces/eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf.zip")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "copy.netperf.zip")
	if err := os.WriteFile(p, b, 0o666); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestParquetAppendFailure: -append of traces that all fail leaves the
// dataset byte for byte as it was (every file's size and SHA-256, every
// folder); with a good trace among them, only its files and folders are
// added.
func TestParquetAppendFailure(t *testing.T) {
	cut, garbage := cutTrace(t)
	dir := filepath.Join(t.TempDir(), "ds")
	if errs, code := parquetRun(t, &parquetFlags{}, "-o", dir, gcETL, small); code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	before := treeOf(t, dir)
	errs, code := parquetRun(t, &parquetFlags{reading: reading{strict: true}}, "-o", dir, "-append", cut, garbage, gcETL)
	if code != exitError || !strings.Contains(errs, "already in the dataset") {
		t.Errorf("exit %d: %s", code, errs)
	}
	after := treeOf(t, dir)
	if !maps.Equal(before, after) {
		t.Errorf("the dataset changed:\nbefore %v\nafter  %v", before, after)
	}
	names := []string{cut, sampleTrace, garbage}
	errs, code = parquetRun(t, &parquetFlags{reading: reading{strict: true}}, append([]string{"-o", dir, "-append"}, names...)...)
	if code != exitError {
		t.Errorf("exit %d: %s", code, errs)
	}
	checkReport(t, dir, errs, names, []string{sampleTrace})
	// Only the trace's files and the folders that hold them are new.
	after = treeOf(t, dir)
	for k := range after {
		if id, _ := os.ReadFile(filepath.Join(dir, k)); path.Dir(k) == dataset.IdentityDir && string(id) == sampleTrace+"\n" ||
			strings.HasSuffix(k, "/"+dataset.FileName(sampleTrace)) && before[k] == "" {
			for p := k; p != "."; p = path.Dir(p) {
				if before[p] == "" {
					delete(after, p)
				}
			}
		}
	}
	for k, v := range after {
		if before[k] != v {
			t.Errorf("%s: %s, was %q", k, v, before[k])
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Errorf("%s removed", k)
		}
	}
}

// countdown is a context that is cancelled by its n-th Err call:
// dataset.WriteTrace asks every 1,024 events and before its commit, so n
// picks a moment inside a trace.
type countdown struct {
	context.Context
	cancel context.CancelFunc
	n      atomic.Int64
}

func newCountdown(n int64) *countdown {
	ctx, cancel := context.WithCancel(context.Background())
	c := &countdown{Context: ctx, cancel: cancel}
	c.n.Store(n)
	return c
}

func (c *countdown) Err() error {
	if c.n.Add(-1) == 0 {
		c.cancel()
	}
	return c.Context.Err()
}

// TestParquetInterrupt: an interrupt at each moment of a run, the traces
// written one at a time: before anything (no directory made), inside the
// first trace, just after the first trace finished (it is written, and
// said so: the interrupt used to hide it), inside the second; and with
// two traces at once, just after one finished. The last lines name
// exactly the traces in the dataset, whole, and nothing of the others is
// in it.
func TestParquetInterrupt(t *testing.T) {
	names := []string{gcETL, sampleTrace, small, arrays}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name    string
		ctx     func() (context.Context, func(string))
		workers int
		written []string
	}{
		{"before", func() (context.Context, func(string)) { return cancelled, nil }, 1, nil},
		{"in the first trace", func() (context.Context, func(string)) {
			return newCountdown(5), nil
		}, 1, nil},
		{"after the first trace", func() (context.Context, func(string)) {
			ctx, cancel := context.WithCancel(context.Background())
			return ctx, func(string) { cancel() }
		}, 1, []string{gcETL}},
		{"in the second trace", func() (context.Context, func(string)) {
			return newCountdown(10), nil
		}, 1, []string{gcETL}},
		{"after a trace, two at once", func() (context.Context, func(string)) {
			ctx, cancel := context.WithCancel(context.Background())
			return ctx, func(name string) {
				if name == gcETL {
					cancel()
				}
			}
		}, 2, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			order := names
			if c.name == "in the first trace" {
				order = []string{sampleTrace, gcETL, small, arrays}
			}
			dir := filepath.Join(t.TempDir(), "ds")
			ctx, after := c.ctx()
			errs, code := parquetRun(t, &parquetFlags{interrupt: ctx, workers: c.workers, afterTrace: after}, append([]string{"-o", dir}, order...)...)
			if code != exitInterrupted || !strings.Contains(errs, "interrupted") {
				t.Fatalf("exit %d, want %d: %s", code, exitInterrupted, errs)
			}
			want := c.written
			if c.workers > 1 {
				// Which traces finished beside gcETL depends on timing;
				// what the report says must be what is in the dataset.
				want, _ = summary(errs)
				if !slices.Contains(want, gcETL) {
					t.Errorf("gcETL, finished before the interrupt, is not reported written:\n%s", errs)
				}
			}
			checkReport(t, dir, errs, order, want)
			if len(want) == 0 {
				if _, err := os.Stat(dir); err == nil {
					t.Errorf("%s was created by a run that wrote nothing", dir)
				}
			}
			t.Log(errs)
		})
	}
}

// parquetChildEnv makes the test binary run clrdump with the arguments
// it holds (JSON), with the real signal handling: TestParquetChild.
const parquetChildEnv = "CLRDUMP_PARQUET_CHILD"

// TestParquetChild is the clrdump TestParquetSignal starts: unless
// parquetChildEnv is set, it does nothing.
func TestParquetChild(t *testing.T) {
	v := os.Getenv(parquetChildEnv)
	if v == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(v), &args); err != nil {
		os.Exit(99)
	}
	os.Exit(run(args, os.Stdin, os.Stdout, os.Stderr, false))
}

// TestParquetSignal: the command itself, interrupted by a real SIGINT as
// soon as its first trace is in the dataset, while others are being
// written: it exits 130 and its last lines name exactly the traces in
// the dataset, whole; nothing of the others is in it, and no staging
// folder is left.
func TestParquetSignal(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("os.Process.Signal cannot send os.Interrupt on Windows")
	}
	// 24 copies of the SampleProfiler trace under their own names.
	src, err := os.ReadFile(sampleTrace)
	if err != nil {
		t.Fatal(err)
	}
	tdir := t.TempDir()
	var names []string
	for i := range 24 {
		p := filepath.Join(tdir, fmt.Sprintf("s%02d.nettrace", i))
		if err := os.WriteFile(p, src, 0o666); err != nil {
			t.Fatal(err)
		}
		names = append(names, p)
	}
	dir := filepath.Join(t.TempDir(), "ds")
	arg, _ := json.Marshal(append([]string{"-format", "parquet", "-o", dir}, names...))
	cmd := exec.Command(os.Args[0], "-test.run=^TestParquetChild$")
	cmd.Env = append(os.Environ(), parquetChildEnv+"="+string(arg), "GOMAXPROCS=2")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(time.Minute)
	for {
		if e, _ := os.ReadDir(filepath.Join(dir, "traces")); len(e) > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("clrdump ended before its first trace was written: %v\n%s", err, stderr.String())
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			t.Fatalf("no trace written in a minute:\n%s", stderr.String())
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-done
	code := cmd.ProcessState.ExitCode()
	written, _ := summary(stderr.String())
	t.Logf("exit %d, %d of %d traces written", code, len(written), len(names))
	if code != exitInterrupted || len(written) == 0 || len(written) == len(names) {
		t.Fatalf("exit %d, want %d, with some traces written and not all:\n%s", code, exitInterrupted, stderr.String())
	}
	checkReport(t, dir, stderr.String(), names, written)
}

// startedLater returns a NetTrace V4 trace that started ms milliseconds
// (and up to a second) later than b: another trace to a dataset, whose
// identity hashes its start. The Trace object's content begins with its
// start, a SYSTEMTIME, whose last field is the milliseconds.
func startedLater(t *testing.T, b []byte, ms int) []byte {
	t.Helper()
	hdr := []byte("\x05\x00\x00\x00Trace\x06")
	i := bytes.Index(b, hdr)
	if i < 0 {
		t.Fatal("no Trace object")
	}
	b = bytes.Clone(b)
	at := i + len(hdr) + 14
	binary.LittleEndian.PutUint16(b[at:], uint16((int(binary.LittleEndian.Uint16(b[at:]))+ms)%1000))
	return b
}

// TestParquetKill: the command killed outright (SIGKILL) while writing,
// then run again with -append over the same traces: the second run
// clears what the first left, and afterwards every trace is in the
// dataset once, whole; the only errors are for the traces the first run
// had written.
func TestParquetKill(t *testing.T) {
	src, err := os.ReadFile(sampleTrace)
	if err != nil {
		t.Fatal(err)
	}
	tdir := t.TempDir()
	var names []string
	for i := range 16 {
		p := filepath.Join(tdir, fmt.Sprintf("k%02d.nettrace", i))
		if err := os.WriteFile(p, startedLater(t, src, i), 0o666); err != nil {
			t.Fatal(err)
		}
		names = append(names, p)
	}
	dir := filepath.Join(t.TempDir(), "ds")
	arg, _ := json.Marshal(append([]string{"-format", "parquet", "-o", dir}, names...))
	cmd := exec.Command(os.Args[0], "-test.run=^TestParquetChild$")
	cmd.Env = append(os.Environ(), parquetChildEnv+"="+string(arg), "GOMAXPROCS=2")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(time.Minute); ; {
		if e, _ := os.ReadDir(filepath.Join(dir, "traces")); len(e) > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("clrdump ended before its first trace was written: %v", err)
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			break
		}
	}
	cmd.Process.Kill()
	<-done
	if _, err := os.Stat(filepath.Join(dir, "_clrevents_tmp")); err != nil {
		t.Errorf("a killed run left no staging folder (%v): was it killed while writing?", err)
	}
	errs, code := parquetRun(t, &parquetFlags{}, append([]string{"-o", dir, "-append"}, names...)...)
	written, notWritten := summary(errs)
	t.Logf("exit %d; the second run wrote %d traces, %d were in the dataset already", code, len(written), len(notWritten))
	for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
		if !strings.Contains(line, "already in the dataset") && !strings.Contains(line, "written") &&
			!strings.Contains(line, "completed the commit") {
			t.Errorf("unexpected: %s", line)
		}
	}
	for _, name := range names {
		checkWritten(t, dir, name)
	}
	if _, err := os.Stat(filepath.Join(dir, "_clrevents_tmp")); err == nil {
		t.Error("the staging folder is left")
	}
}
