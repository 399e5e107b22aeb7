package dataset

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/clrgo/clrevents/trace"
)

// TestWalkedStacks: the events of an ETW log whose stacks the kernel or
// the runtime walked after them (PerfView's lock waits and the exception
// it threw, in testdata's cut of a .NET Framework log) have their stacks
// in event_stacks, by seq: each the frames trace.Stacks gives the event
// read on its own, as a row of the stacks table. Before, their stack_id
// was NULL and nothing gave their stacks.
func TestWalkedStacks(t *testing.T) {
	const path = "../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip"
	// What the trace's walks give each event, by its seq (time order).
	want := map[int64][]uint64{}
	var names = map[int64]string{}
	{
		r, err := trace.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var s trace.Stacks
		refs := map[int64]trace.StackRef{}
		for seq := int64(0); ; seq++ {
			e, err := r.Next()
			if err != nil {
				break
			}
			names[seq] = e.Name()
			if !s.Add(e) && len(e.Stack()) == 0 {
				refs[seq] = e.StackRef()
			}
		}
		r.Close()
		for seq, ref := range refs {
			if f, _, ok := s.Stack(ref, nil); ok && len(f) > 0 {
				want[seq] = f
			}
		}
	}
	dir := filepath.Join(t.TempDir(), "ds")
	d, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.WriteTrace(context.Background(), path, src)
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	stacks := map[int64][]uint64{}
	for _, row := range readTable(t, filepath.Join(dir, "stacks", FileName(path))) {
		stacks[row[1].Int64()] = listOf(row[2:])
	}
	got := map[int64][]uint64{}
	for _, row := range readTable(t, filepath.Join(dir, "event_stacks", FileName(path))) {
		seq, id := row[1].Int64(), row[2].Int64()
		f, ok := stacks[id]
		if !ok {
			t.Fatalf("event %d: stack %d is not in the stacks table", seq, id)
		}
		got[seq] = f
	}
	if len(want) == 0 || int64(len(got)) != st.WalkedStacks || len(got) != len(want) {
		t.Fatalf("%d events with walked stacks (Stats %d), want %d", len(got), st.WalkedStacks, len(want))
	}
	kinds := map[string]int{}
	for seq, f := range want {
		if !slices.Equal(got[seq], f) {
			t.Errorf("event %d (%s): stack %x, want %x", seq, names[seq], got[seq], f)
		}
		kinds[names[seq]]++
	}
	t.Logf("walked stacks by event: %v", kinds)
	if kinds["ExceptionThrown_V1"] == 0 || kinds["ContentionStart_V1"] == 0 {
		t.Errorf("no walked stack for the exception or the lock waits: %v", kinds)
	}
}

// readTable reads every row of a Parquet file.
func readTable(t *testing.T, path string) []parquet.Row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	var out []parquet.Row
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		buf := make([]parquet.Row, 64)
		for {
			n, err := rows.ReadRows(buf)
			for _, r := range buf[:n] {
				out = append(out, r.Clone())
			}
			if err != nil {
				break
			}
		}
		rows.Close()
	}
	return out
}

// listOf is the values of a LIST of UINT64 column, the rest of a row.
func listOf(vs []parquet.Value) []uint64 {
	var out []uint64
	for _, v := range vs {
		if !v.IsNull() {
			out = append(out, uint64(v.Int64()))
		}
	}
	return out
}
