package dataset

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/trace"
)

// TestStackIDs: every event row's stack_id names the stacks row whose ips
// are the event's stack as the reader gives it, every stack gets one row,
// and the ids count from 0, on the .NET Core 3.0 trace: 73,293 events
// with stacks, 1,164 distinct, from a reader that refills its stack
// table at each of 17 sequence points, so that other stacks come at the
// addresses of earlier ones (what stackID's look-up by address must not
// be fooled by).
func TestStackIDs(t *testing.T) {
	const name = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	dir := filepath.Join(t.TempDir(), "ds")
	d, err := Create(dir, Options{})
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

	// The events' stacks, by seq, as the reader gives them.
	src, err := trace.Open(name, trace.WithStrict())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var want [][]uint64
	for {
		e, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, slices.Clone(e.Stack()))
	}
	if int64(len(want)) != st.Events {
		t.Fatalf("the reader gave %d events, the dataset %d", len(want), st.Events)
	}

	stacks := map[int64][]uint64{}
	rows := 0
	seen := make([]bool, len(want))
	var checks []idCheck // the event rows with a stack, checked once every stacks row is read
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		top := strings.Split(filepath.ToSlash(rel), "/")[0]
		if top != "stacks" && top != "events" && top != "generic" {
			return nil
		}
		f, pf := openParquet(t, p)
		defer f.Close()
		col := map[string]int{}
		for i, c := range pf.Schema().Columns() {
			col[c[0]] = i
		}
		eachRow(t, pf, func(row parquet.Row) {
			if top == "stacks" {
				var id int64
				ips := []uint64{}
				for _, v := range row {
					switch v.Column() {
					case col["stack_id"]:
						id = v.Int64()
					case col["ips"]:
						ips = append(ips, uint64(v.Int64()))
					}
				}
				if _, dup := stacks[id]; dup {
					t.Fatalf("stack_id %d has two rows", id)
				}
				stacks[id] = ips
				return
			}
			rows++
			seq, id := int64(-1), int64(-1)
			for _, v := range row {
				switch v.Column() {
				case col["seq"]:
					seq = v.Int64()
				case col["stack_id"]:
					if !v.IsNull() {
						id = v.Int64()
					}
				}
			}
			if seq < 0 || seq >= int64(len(want)) || seen[seq] {
				t.Fatalf("%s: seq %d out of range or seen twice", rel, seq)
			}
			seen[seq] = true
			if len(want[seq]) == 0 {
				if id >= 0 {
					t.Errorf("%s: event %d has no stack, its row stack_id %d", rel, seq, id)
				}
				return
			}
			if id < 0 {
				t.Errorf("%s: event %d has a stack of %d frames, its row none", rel, seq, len(want[seq]))
				return
			}
			checks = append(checks, idCheck{seq: seq, id: id, rel: rel})
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if int64(rows) != st.Events {
		t.Fatalf("%d event rows, want %d", rows, st.Events)
	}
	distinct := map[string]bool{}
	for _, s := range want {
		if len(s) > 0 {
			distinct[string(uint64Bytes(s))] = true
		}
	}
	if len(stacks) != len(distinct) || int64(len(stacks)) != st.Stacks {
		t.Fatalf("%d stacks rows, Stats.Stacks %d, %d distinct stacks in the trace", len(stacks), st.Stacks, len(distinct))
	}
	for id := range int64(len(stacks)) {
		if _, ok := stacks[id]; !ok {
			t.Fatalf("no stacks row with stack_id %d of ids 0–%d", id, len(stacks)-1)
		}
	}
	checked := 0
	for _, c := range checks {
		if !slices.Equal(stacks[c.id], want[c.seq]) {
			t.Fatalf("%s: event %d's stack_id %d is a stack of %d frames, not the event's %d", c.rel, c.seq, c.id, len(stacks[c.id]), len(want[c.seq]))
		}
		checked++
	}
	if checked < 70000 {
		t.Fatalf("checked %d events' stacks, want the trace's 73,293", checked)
	}
}

type idCheck struct {
	seq, id int64
	rel     string
}

func uint64Bytes(s []uint64) []byte {
	b := make([]byte, 0, 8*len(s))
	for _, x := range s {
		for i := range 8 {
			b = append(b, byte(x>>(8*i)))
		}
	}
	return b
}

// TestStackIDReuse: stackID numbers stacks by their frames, not by where
// they are: the same frames at two addresses get one id, and other frames
// at an address seen before (the reader refilling its stack table) get
// another, also when they are as many.
func TestStackIDReuse(t *testing.T) {
	d, err := Create(filepath.Join(t.TempDir(), "ds"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tw := &traceWriter{d: d, name: "t", file: FileName("t"), tables: map[*clrimpl.Descriptor]*table{}, stackIDs: map[string]int64{}}
	if tw.stage, err = os.MkdirTemp(d.tmp, "t-*"); err != nil {
		t.Fatal(err)
	}
	tw.fl, tw.mem, tw.enc = newFlusher(), newBudget(d.mem), &encoder{codec: d.codec()}
	defer tw.abort()
	if tw.stacks, err = tw.newTable([]string{"stacks"}, "stacks", stacksColumns); err != nil {
		t.Fatal(err)
	}
	var st Stats
	id := func(s []uint64) int64 {
		t.Helper()
		n, err := tw.stackID(s, &st)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	table := []uint64{1, 2, 3, 4, 5, 6} // a reader's stack table
	a := id(table[0:3])
	if b := id(table[0:3]); b != a {
		t.Errorf("the same stack again: id %d, then %d", a, b)
	}
	if b := id(slices.Clone(table[0:3])); b != a {
		t.Errorf("the same frames elsewhere: id %d, then %d", a, b)
	}
	if b := id(table[0:2]); b == a {
		t.Errorf("fewer frames at the same address: the same id %d", b)
	}
	id(table[0:3])
	copy(table, []uint64{7, 8, 9}) // the table refilled
	c := id(table[0:3])
	if c == a {
		t.Errorf("other frames at the same address: the same id %d", c)
	}
	copy(table, []uint64{1, 2, 3})
	if b := id(table[0:3]); b != a {
		t.Errorf("the first frames back at the address: id %d, want %d", b, a)
	}
	if st.Stacks != 3 {
		t.Errorf("Stats.Stacks %d, want 3", st.Stacks)
	}
}
