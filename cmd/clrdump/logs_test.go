package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/tracetest"
)

const diagZip = "../../testdata/traces/diaghub-dotnetcore3.1-win-x64-diagsession.cut.zip"

// diagDir writes the diagnostics session's four logs side by side into
// a new folder and returns their paths, diaghub.etl first.
func diagDir(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	names, logs := tracetest.Members(t, diagZip)
	var paths []string
	for i, b := range logs {
		p := filepath.Join(dir, filepath.Base(names[i]))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// total is the event count of -stats output.
func total(t *testing.T, stats string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stats), "\n")
	f := strings.Fields(lines[len(lines)-1])
	if len(f) < 3 || f[2] != "total" {
		t.Fatalf("no total in %q", stats)
	}
	return f[0]
}

// TestSingleLog: clrdump reads a log with the logs beside it, as the
// archive that holds them all reads; -single-log reads the file alone.
func TestSingleLog(t *testing.T) {
	paths := diagDir(t)
	out, errs, code := dump(t, "-stats", paths[0])
	zipOut, _, _ := dump(t, "-stats", diagZip)
	if code != exitOK || errs != "" || out != zipOut || total(t, out) != "3076" {
		t.Fatalf("-stats of diaghub.etl: exit %d, %s, %d bytes of output (the archive's: %d), %s events", code, errs, len(out), len(zipOut), total(t, out))
	}
	out, errs, code = dump(t, "-stats", "-single-log", paths[0])
	if code != exitOK || errs != "" || total(t, out) != "1299" {
		t.Errorf("-single-log -stats of diaghub.etl: exit %d, %s, %s events; want 1299", code, errs, total(t, out))
	}
	out, _, code = dump(t, "-report", "jit", "-single-log", paths[3])
	if code != exitOK || !strings.Contains(out, "Process 2140:") || strings.Contains(out, "locProject") {
		t.Errorf("-single-log -report jit of the user log: exit %d, %q; want process 2140 unnamed", code, firstLine(out))
	}
	out, _, code = dump(t, "-report", "jit", diagZip)
	if code != exitOK || !strings.Contains(out, "Process 2140 (locProject.exe):") {
		t.Errorf("-report jit of the session: exit %d, %q; want process 2140 named", code, firstLine(out))
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestParquetSiblings: given a session's logs, -format parquet writes the
// first, read with the others, and says the others were read with it,
// rather than write their events twice; -single-log writes each.
func TestParquetSiblings(t *testing.T) {
	paths := diagDir(t)
	for _, single := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "ds")
		errs, code := parquetRun(t, &parquetFlags{reading: reading{singleLog: single}}, append([]string{"-o", dir}, paths...)...)
		if code != exitOK {
			t.Fatalf("single %v: exit %d: %s", single, code, errs)
		}
		written, _ := filepath.Glob(filepath.Join(dir, "traces", "*.parquet"))
		var events int64
		for _, w := range written {
			for _, row := range readParquet(t, w) {
				events += row["events"].Int64()
			}
		}
		switch {
		case !single && (len(written) != 1 || events != 3076 || strings.Count(errs, "read with "+paths[0]) != 3):
			t.Errorf("%d traces of %d events written; stderr %q; want diaghub.etl's 3,076 and three logs read with it", len(written), events, errs)
		case single && (len(written) != 4 || events != 3076 || errs != ""):
			t.Errorf("-single-log: %d traces of %d events written, stderr %q; want 4 of 3,076 in all", len(written), events, errs)
		}
	}
}

// TestParquetSideLogAppended: a side log added in a later run, whose
// events the dataset holds through the log it was read with, is refused,
// and so is the main log when a side log of it is in the dataset on its
// own: neither puts those events in twice. -single-log adds each alone.
func TestParquetSideLogAppended(t *testing.T) {
	paths := diagDir(t) // diaghub.etl, then its side logs
	add := func(dir string, single bool, name string, appendTo bool) (string, int) {
		args := []string{"-o", dir}
		if appendTo {
			args = append(args, "-append")
		}
		return parquetRun(t, &parquetFlags{reading: reading{singleLog: single}}, append(args, name)...)
	}
	dir := filepath.Join(t.TempDir(), "ds")
	if errs, code := add(dir, false, paths[0], false); code != exitOK {
		t.Fatalf("the session: exit %d: %s", code, errs)
	}
	errs, code := add(dir, false, paths[1], true)
	if want := paths[1] + ": not added: the dataset holds " + paths[0] + ", which was read with it"; code != exitError || !strings.Contains(errs, want) {
		t.Errorf("a side log after its main log: exit %d, %q; want 1 and %q", code, errs, want)
	}
	dir2 := filepath.Join(t.TempDir(), "ds")
	if errs, code := add(dir2, false, paths[1], false); code != exitOK {
		t.Fatalf("a side log alone: exit %d: %s", code, errs)
	}
	errs, code = add(dir2, false, paths[0], true)
	if want := paths[0] + ": not added: it is read with " + paths[1] + ", which the dataset holds on its own"; code != exitError || !strings.Contains(errs, want) {
		t.Errorf("the main log after a side log: exit %d, %q; want 1 and %q", code, errs, want)
	}
	if errs, code := add(dir2, true, paths[0], true); code != exitOK {
		t.Errorf("-single-log: exit %d, %q", code, errs)
	}
	if n, _ := filepath.Glob(filepath.Join(dir2, "traces", "*.parquet")); len(n) != 2 {
		t.Errorf("%d traces in the second dataset, want the side log and the main log alone", len(n))
	}
}
