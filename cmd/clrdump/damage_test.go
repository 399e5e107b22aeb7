package main

import (
	"archive/zip"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/clrgo/clrevents/internal/tracetest"
)

const coreclr30 = "../../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"

// damagedFile writes the .NET Core 3.0 trace with 64 random bytes at
// 2,000,000 (inside an EventBlock) to a file.
func damagedFile(t *testing.T) string {
	t.Helper()
	b := unzipFirst(t, coreclr30)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 2_000_000; i < 2_000_064; i++ {
		b[i] = byte(rng.Uint32())
	}
	p := filepath.Join(t.TempDir(), "damaged.nettrace")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDamagedTrace: every mode writes its whole output from a damaged
// trace (the events around the damage are there), then says on standard
// error what was skipped, naming the offset, and exits 1; -strict stops at
// the damage.
func TestDamagedTrace(t *testing.T) {
	bad := damagedFile(t)
	intact, _, code := dump(t, "-format", "jsonl", coreclr30)
	if code != exitOK {
		t.Fatal("the intact trace does not read")
	}
	nIntact := strings.Count(intact, "\n")
	for _, c := range []struct {
		name string
		args []string
		// what the output must hold
		want string
	}{
		{"jsonl", []string{"-format", "jsonl"}, `"event":"GCStart_V2"`},
		{"text", []string{}, "GCStart_V2"},
		{"csv", []string{"-format", "csv"}, "GCStart_V2"},
		{"stats", []string{"-stats"}, "total"},
		{"profile cpu", []string{"-profile", "cpu"}, "EventGenerator.Program"},
		{"profile alloc", []string{"-profile", "alloc"}, "EventGenerator.Program"},
		{"report gc", []string{"-report", "gc"}, "Process 10064:"},
		{"report jit", []string{"-report", "jit"}, "Process 10064:"},
		{"report gc jsonl", []string{"-report", "gc", "-format", "jsonl"}, `"pid":10064`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := dump(t, append(c.args, bad)...)
			if code != exitError {
				t.Errorf("exit %d, want 1", code)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("output has no %q (%d bytes)", c.want, len(out))
			}
			if !strings.Contains(errs, bad+": nettrace: 1 damaged range skipped") || !strings.Contains(errs, "EventBlock at offset") {
				t.Errorf("stderr: %s", errs)
			}
			if c.name == "jsonl" {
				// The damage also broke an event before the fault, which
				// reads but does not decode: named, with its offset.
				if !strings.Contains(errs, "1 event did not decode: "+bad+": event at offset ") {
					t.Errorf("stderr does not name the event that did not decode: %s", errs)
				}
				n := strings.Count(out, "\n")
				if n < nIntact*99/100 || n >= nIntact {
					t.Errorf("%d events of %d", n, nIntact)
				}
				t.Logf("%d of %d events; %s", n, nIntact, strings.TrimSpace(errs))
			}
		})
	}
	strict, errs, code := dump(t, "-strict", "-format", "jsonl", bad)
	if n := strings.Count(strict, "\n"); code != exitError || n >= nIntact*99/100 || strings.Contains(errs, "damaged range skipped") || !strings.Contains(errs, "EventBlock at offset") {
		t.Errorf("-strict: exit %d, %d events, %s", code, n, errs)
	}
}

// TestDamagedParquet: a damaged trace is written with the events that
// could be read, its traces row records the damage, and the run exits 1
// naming the offset.
func TestDamagedParquet(t *testing.T) {
	bad := damagedFile(t)
	dir := filepath.Join(t.TempDir(), "ds")
	errs, code := parquetRun(t, &parquetFlags{}, "-o", dir, bad)
	if code != exitError || !strings.Contains(errs, "1 damaged range skipped") || !strings.Contains(errs, "the dataset holds the events read") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	damaged, damage := tracesRow(t, dir)
	if damaged <= 0 || !strings.Contains(damage, "damaged range skipped") {
		t.Errorf("traces row: damaged_bytes %d, damage %q", damaged, damage)
	}
}

// TestChecksumParquet: a zipped trace whose member inflates whole but
// whose CRC-32 the archive contradicts (its compressed bytes damaged where
// inflating went on) is written with every event, its traces row naming
// the checksum with 0 damaged bytes (where they differ is not known), and
// the run exits 1 saying so.
func TestChecksumParquet(t *testing.T) {
	data, err := os.ReadFile("../../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	if err != nil {
		t.Fatal(err)
	}
	bad := tracetest.File(t, "bad.nettrace.zip", tracetest.Zip(t, "bad.nettrace", zip.Deflate, data, crc32.ChecksumIEEE(data)^1, uint64(len(data))))
	dir := filepath.Join(t.TempDir(), "ds")
	errs, code := parquetRun(t, &parquetFlags{}, "-o", dir, bad)
	if code != exitError || !strings.Contains(errs, "checksum error") || !strings.Contains(errs, "the dataset holds the events read") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if damaged, damage := tracesRow(t, dir); damaged != 0 || !strings.Contains(damage, "CRC-32") {
		t.Errorf("traces row: damaged_bytes %d, damage %q", damaged, damage)
	}
	events, _ := filepath.Glob(filepath.Join(dir, "events", "*", "*", "*.parquet"))
	if len(events) == 0 {
		t.Error("no event tables")
	}
}

// tracesRow returns damaged_bytes and damage of the one row of the
// dataset's traces table.
func tracesRow(t *testing.T, dir string) (damaged int64, damage string) {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "traces", "*.parquet"))
	if len(m) != 1 {
		t.Fatalf("traces table: %v", m)
	}
	f, err := os.Open(m[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]parquet.Row, 1)
	n, _ := pf.RowGroups()[0].Rows().ReadRows(rows)
	if n != 1 {
		t.Fatal("no traces row")
	}
	for i, col := range pf.Schema().Columns() {
		switch col[0] {
		case "damaged_bytes":
			damaged = rows[0][i].Int64()
		case "damage":
			damage = string(rows[0][i].ByteArray())
		}
	}
	return damaged, damage
}
