package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrimpl"
)

var flushCols = []column{{name: "n", kind: clrimpl.ColumnInt64}}

// addRows adds n rows to tb.
func addRows(t *testing.T, tb *table, n int) {
	t.Helper()
	for i := range n {
		tb.begin()
		tb.Int(int64(i))
		if err := tb.end(); err != nil {
			t.Fatal(err)
		}
	}
}

// rowsIn is the number of rows of the Parquet file at path.
func rowsIn(t *testing.T, path string) int64 {
	t.Helper()
	f, pf := openParquet(t, path)
	defer f.Close()
	return pf.NumRows()
}

// TestFlusherInline: tables that ship no row group before their last
// rows are created and written by the caller, in the order they were
// made, without the flusher's goroutines; their files hold every row.
func TestFlusherInline(t *testing.T) {
	dir := t.TempDir()
	fl := newFlusher()
	var tbs []*table
	for i, n := range []int{5, 0, 3} {
		tb := newTable(filepath.Join(dir, "x.parquet"), filepath.Join(dir, string(rune('a'+i))), "x", flushCols, nil, 100, fl, nil, nil)
		addRows(t, tb, n)
		tbs = append(tbs, tb)
	}
	if fl.started || len(fl.pending) != 3 {
		t.Fatalf("started %v, %d tables to open; want the goroutines not started and 3", fl.started, len(fl.pending))
	}
	for _, tb := range tbs {
		if _, err := os.Stat(tb.tmp); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s exists before the table's last rows: %v", tb.tmp, err)
		}
	}
	for _, tb := range tbs {
		if err := fl.send(job{t: tb, b: tb.cur, last: true}); err != nil {
			t.Fatal(err)
		}
	}
	if fl.started || fl.jobs != nil {
		t.Fatal("the goroutines started for last rows")
	}
	if err := fl.stop(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{5, 0, 3} {
		if got := rowsIn(t, tbs[i].tmp); got != want {
			t.Errorf("table %d: %d rows, want %d", i, got, want)
		}
	}
}

// TestFlusherStartsOnShip: the first row group a table ships before its
// last rows starts the goroutines, and the tables made before then are
// opened by them; every file is whole.
func TestFlusherStartsOnShip(t *testing.T) {
	dir := t.TempDir()
	fl := newFlusher()
	early := newTable(filepath.Join(dir, "x.parquet"), filepath.Join(dir, "early"), "x", flushCols, nil, 100, fl, nil, nil)
	addRows(t, early, 4)
	busy := newTable(filepath.Join(dir, "x.parquet"), filepath.Join(dir, "busy"), "x", flushCols, nil, 2, fl, nil, nil)
	addRows(t, busy, 1)
	if fl.started {
		t.Fatal("started before a row group shipped")
	}
	addRows(t, busy, 6) // a row group of 2 rows, three times
	if !fl.started || fl.pending != nil {
		t.Fatalf("started %v, %d tables waiting, after row groups shipped", fl.started, len(fl.pending))
	}
	for _, tb := range []*table{early, busy} {
		if err := fl.send(job{t: tb, b: tb.cur, last: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := fl.stop(); err != nil {
		t.Fatal(err)
	}
	if n := rowsIn(t, early.tmp); n != 4 {
		t.Errorf("early table: %d rows, want 4", n)
	}
	if n := rowsIn(t, busy.tmp); n != 7 {
		t.Errorf("busy table: %d rows, want 7", n)
	}
}

// TestFlusherInlineFailure: a table that cannot be opened fails its
// trace at its last rows, inline as on the goroutines: send and stop say
// which file, the tables behind it are not written, and aborting every
// table (which waits for its opening) returns.
func TestFlusherInlineFailure(t *testing.T) {
	for _, started := range []bool{false, true} {
		dir := t.TempDir()
		fl := newFlusher()
		bad := newTable(filepath.Join(dir, "bad.parquet"), filepath.Join(dir, "bad"), "x", flushCols, nil, 100, fl, nil, errors.New("disk on fire"))
		addRows(t, bad, 2)
		good := newTable(filepath.Join(dir, "good.parquet"), filepath.Join(dir, "good"), "x", flushCols, nil, 100, fl, nil, nil)
		addRows(t, good, 2)
		if started {
			fl.start()
		}
		err := fl.send(job{t: bad, b: bad.cur, last: true})
		if !started && (err == nil || !strings.Contains(err.Error(), "bad.parquet: disk on fire")) {
			t.Errorf("inline: send: %v, want the bad table's failure", err)
		}
		serr := fl.stop()
		if serr == nil || !strings.Contains(serr.Error(), "bad.parquet: disk on fire") {
			t.Errorf("started %v: stop: %v, want the bad table's failure", started, serr)
		}
		done := make(chan struct{})
		go func() {
			bad.abort()
			good.abort()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("started %v: abort waits for an opening that never comes", started)
		}
		if _, err := os.Stat(bad.tmp); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("started %v: the bad table's file: %v", started, err)
		}
	}
}
