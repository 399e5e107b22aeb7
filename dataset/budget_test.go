package dataset

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestBudgetKeepsRows: row groups ended by the memory budget (a budget of
// 64 KiB, which ends thousands) or by a small RowGroupRows hold the same
// rows, in the same order, as the default's, in every table of real traces: the .NET Core 3.0 trace (its
// stacks, GC and sample tables) and an ETW log with the kernel's tables,
// tables the trace describes and the generic table. parquet-go reads the
// files back, value by value and level by level. The small budget's files
// hold more row groups, so the flushes it forces happened. The other
// codecs give the same rows too. (It found the
// budget shipping an event's table in the middle of its row, while the
// stacks table took the row's stack.)
func TestBudgetKeepsRows(t *testing.T) {
	traces := []string{
		"../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip",
		"../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip",
	}
	for _, name := range traces {
		t.Run(filepath.Base(name), func(t *testing.T) {
			want, wantGroups := exportRows(t, name, Options{})
			for _, o := range []Options{{MemoryBudget: 64 << 10}, {RowGroupRows: 1000}, {Compression: "snappy"}, {Compression: "none"}} {
				got, groups := exportRows(t, name, o)
				if o.Compression == "" && groups <= wantGroups {
					t.Errorf("%+v: %d row groups, the default %d: no flush forced", o, groups, wantGroups)
				}
				if !slices.Equal(mapsKeys(got), mapsKeys(want)) {
					t.Fatalf("%+v: tables %v, want %v", o, mapsKeys(got), mapsKeys(want))
				}
				for table, rows := range want {
					g := got[table]
					if len(g) != len(rows) {
						t.Errorf("%+v: %s: %d rows, want %d", o, table, len(g), len(rows))
						continue
					}
					for i := range rows {
						if !g[i].Equal(rows[i]) {
							t.Errorf("%+v: %s: row %d is\n%v, want\n%v", o, table, i, g[i], rows[i])
							break
						}
					}
				}
				t.Logf("%+v: %d tables, %d row groups (default %d)", o, len(want), groups, wantGroups)
			}
		})
	}
}

// exportRows writes the trace into a new dataset with o and reads back
// every row of every table, by the table's path in the dataset, and
// counts the row groups.
func exportRows(t *testing.T, name string, o Options) (map[string][]parquet.Row, int) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	d, err := Create(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	st, err := write(t, d, context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	out := map[string][]parquet.Row{}
	groups := 0
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		pf, err := parquet.OpenFile(f, fi.Size())
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		var rows []parquet.Row
		for _, rg := range pf.RowGroups() {
			groups++
			r := rg.Rows()
			buf := make([]parquet.Row, 64)
			for {
				n, err := r.ReadRows(buf)
				for _, row := range buf[:n] {
					rows = append(rows, row.Clone())
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					r.Close()
					return fmt.Errorf("%s: %w", rel, err)
				}
			}
			r.Close()
		}
		if int64(len(rows)) != pf.NumRows() {
			return fmt.Errorf("%s: %d rows read, the footer says %d", rel, len(rows), pf.NumRows())
		}
		out[filepath.ToSlash(rel)] = rows
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != st.Tables {
		t.Fatalf("%d files, want %d", len(out), st.Tables)
	}
	return out, groups
}

func mapsKeys[V any](m map[string]V) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	slices.Sort(k)
	return k
}

// TestEmptyEventSourceEvents: EventSource events declared without
// arguments have a table of their own, of the header columns (as jsonl
// shows them with "fields":{}), not rows of the generic table, which is
// for events nothing describes: a query over event=TestEmptyEvent found
// none.
func TestEmptyEventSourceEvents(t *testing.T) {
	tables, _ := exportRows(t, "../testdata/traces/eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf.zip", Options{})
	for _, ev := range []struct {
		name string
		rows int
	}{{"TestEmptyEvent", 2}, {"SendEmptyEvent", 1}} {
		n := -1
		for path, rows := range tables {
			if strings.HasPrefix(path, "events/provider=MySource/event="+ev.name+"/") {
				n = len(rows)
			}
		}
		if n != ev.rows {
			t.Errorf("MySource/%s: %d rows in a table of its own, want %d", ev.name, n, ev.rows)
		}
	}
	for path, rows := range tables {
		if strings.HasPrefix(path, "generic/") && len(rows) > 0 {
			for _, row := range rows {
				for _, v := range row {
					if s := v.String(); strings.Contains(s, "EmptyEvent") {
						t.Errorf("generic holds %s", s)
					}
				}
			}
		}
	}
}
