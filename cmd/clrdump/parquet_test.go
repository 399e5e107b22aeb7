package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/dataset"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/internal/eventfmt"
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

// eventInfos finds an event type by provider and manifest symbol.
func eventInfos() map[[2]string]*clrevents.EventInfo {
	m := map[[2]string]*clrevents.EventInfo{}
	evs := clrevents.Events()
	for i := range evs {
		m[[2]string{evs[i].Provider.String(), evs[i].Name}] = &evs[i]
	}
	return m
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
					if isHeader(colName) {
						colName += "_field" // the dataset's name for a field named like a header column
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
				for name := range fields {
					diffs = append(diffs, "JSON field "+name+" has no column")
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
		if info := infos[[2]string{provider, event}]; info != nil {
			check(path, func(int) []clrevents.Column { return info.Columns }, provider, event, false)
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
	leftovers, _ := filepath.Glob(filepath.Join(dir, "*", "*.tmp"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
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
		s := e.TraceSchema()
		if s == nil && e.ETL() != nil {
			s = etl.KernelSchema(e.ETL())
		}
		if s != nil {
			if _, err := s.AppendJSON(nil, e.Payload(), e.PointerSize()); err == nil {
				out[seq] = s.Columns()
			}
		} else if m := e.Metadata(); m != nil && len(m.Fields) > 0 && m.FieldsErr == nil {
			if _, err := m.AppendJSON(nil, e.Payload()); err == nil {
				out[seq] = m.Columns()
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
	tmp, _ := filepath.Glob(filepath.Join(dir, "*", ".*.tmp"))
	if len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
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

// TestParquetInterrupt: an interrupt (a cancelled context) leaves no file
// at all: neither temporary nor final.
func TestParquetInterrupt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stderr bytes.Buffer
	fs := newTestFlagSet()
	pq := addParquetFlags(fs)
	pq.interrupt = ctx
	if err := fs.Parse([]string{"-format", "parquet", "-o", dir, "../../testdata/traces/gcevents.etl.zip"}); err != nil {
		t.Fatal(err)
	}
	if code := pq.run(fs, "parquet", &stderr); code != exitInterrupted {
		t.Errorf("exit %d, want %d: %s", code, exitInterrupted, stderr.String())
	}
	var files []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && fi.Name() != dataset.MarkerFile {
			files = append(files, p)
		}
		return nil
	})
	if len(files) > 0 {
		t.Errorf("files left after an interrupt: %v", files)
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
