package main

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The whole command, in process, over unzipped copies of the shared
// traces (so that inflating the zip is not measured): for profiles
// (-cpuprofile) and for ratios between modes in one run. Whole-process
// ratios are measured with bench/paired (see BENCHMARKS.md, issue 17).

var unzipped sync.Map // zip path → unzipped path

// tempDirs are the directories unzippedTrace made; TestMain removes them
// when the test binary is done (the traces in them are kept across
// benchmarks, so no single benchmark's cleanup may remove them).
var tempDirs sync.Map

func TestMain(m *testing.M) {
	code := m.Run()
	tempDirs.Range(func(dir, _ any) bool {
		os.RemoveAll(dir.(string))
		return true
	})
	os.Exit(code)
}

// unzippedTrace expands the shared trace name (a zip) once per test binary
// into a temporary directory, or skips the benchmark when it is absent.
func unzippedTrace(b *testing.B, name string) string {
	b.Helper()
	zp := filepath.Join("..", "..", "..", "shared", "fixtures", "traces", "perfview", name)
	if p, ok := unzipped.Load(zp); ok {
		return p.(string)
	}
	zr, err := zip.OpenReader(zp)
	if err != nil {
		b.Skip("needs the shared traces: ", err)
	}
	defer zr.Close()
	dir, err := os.MkdirTemp("", "clrdump-bench")
	if err != nil {
		b.Fatal(err)
	}
	tempDirs.Store(dir, true)
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || filepath.Ext(f.Name) == ".txt" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			b.Fatal(err)
		}
		out := filepath.Join(dir, filepath.Base(f.Name))
		w, err := os.Create(out)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(w, rc); err != nil {
			b.Fatal(err)
		}
		rc.Close()
		w.Close()
		unzipped.Store(zp, out)
		return out
	}
	b.Fatalf("%s holds no trace", zp)
	return ""
}

func BenchmarkClrdump(b *testing.B) {
	const v30 = "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	const v20 = "eventpipe-dotnetcore2.0-linux-objver2.netperf.zip"
	const etl = "net.4.5.2.x86.etl.zip"
	for _, c := range []struct {
		name  string
		trace string
		args  []string
	}{
		{"trace=3.0/stats/order=time", v30, []string{"-stats"}},
		{"trace=3.0/stats/order=file", v30, []string{"-stats", "-order", "file"}},
		{"trace=3.0/format=jsonl", v30, []string{"-format", "jsonl"}},
		{"trace=2.0/format=text", v20, []string{"-format", "text"}},
		{"trace=2.0/format=jsonl", v20, []string{"-format", "jsonl"}},
		{"trace=2.0/format=csv", v20, []string{"-format", "csv"}},
		{"trace=etl/format=jsonl", etl, []string{"-format", "jsonl"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := unzippedTrace(b, c.trace)
			if st, err := os.Stat(p); err == nil {
				b.SetBytes(st.Size())
			}
			args := append(append([]string{}, c.args...), p)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if code := run(args, nil, io.Discard, io.Discard, false); code != 0 {
					b.Fatalf("clrdump %v: exit %d", args, code)
				}
			}
		})
	}
}

// The fast paths of output.go, against what they replace.

// TestAppendCSVField: fields and JSON values are written as encoding/csv
// writes them (after encoding/json unquotes a string value).
func TestAppendCSVField(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	pool := []string{"a", "Z", "0", " ", "\t", ",", "\"", "\r", "\n", "\\", "\\.", ".", "\u00a0", "\u0085", "é", "\u2028", "\x00", "\x1f", "\xff", "{", "[", ":"}
	var fields []string
	for range 30000 {
		var sb strings.Builder
		for range r.IntN(8) {
			sb.WriteString(pool[r.IntN(len(pool))])
		}
		fields = append(fields, sb.String())
	}
	fields = append(fields, "", `\.`, " x", "x ", `""`)
	for _, f := range fields {
		var want bytes.Buffer
		w := csv.NewWriter(&want)
		w.Write([]string{"p", f})
		w.Flush()
		if got := "p," + string(appendCSVField(nil, f)) + "\n"; got != want.String() {
			t.Fatalf("appendCSVField(%q) = %q, want %q", f, got, want.String())
		}
		if got := "p," + string(appendCSVField(nil, []byte(f))) + "\n"; got != want.String() {
			t.Fatalf("appendCSVField([]byte(%q)) = %q, want %q", f, got, want.String())
		}
		// As a JSON value: a quoted string is unquoted first.
		val := []byte(f)
		if r.IntN(2) == 0 {
			val, _ = json.Marshal(f)
			val = bytes.ReplaceAll(val, []byte(`\u003c`), []byte("<"))
		}
		s := string(val)
		if len(val) > 0 && val[0] == '"' {
			var u string
			if json.Unmarshal(val, &u) == nil {
				s = u
			}
		}
		want.Reset()
		w.Write([]string{"p", s})
		w.Flush()
		if got := "p," + string(appendCSVValue(nil, val)) + "\n"; got != want.String() {
			t.Fatalf("appendCSVValue(%q) = %q, want %q", val, got, want.String())
		}
	}
}

// TestEachMember: members of objects with strings (escaped quotes and
// backslashes among them), numbers, literals, arrays and nested objects
// come out as encoding/json reads them.
func TestEachMember(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	strs := []string{"", "a", `"`, `\`, `\"`, `a\`, `x"y`, "{[,]}", "é\n"}
	val := func() any {
		switch r.IntN(6) {
		case 0:
			return strs[r.IntN(len(strs))]
		case 1:
			return r.Int64() - r.Int64()
		case 2:
			return r.IntN(2) == 0
		case 3:
			return nil
		case 4:
			return []any{strs[r.IntN(len(strs))], 1, map[string]any{"k": strs[r.IntN(len(strs))]}}
		}
		return map[string]any{"a": []any{}, "b": strs[r.IntN(len(strs))]}
	}
	for range 5000 {
		var keys []string
		var sb strings.Builder
		sb.WriteByte('{')
		for i := range r.IntN(5) {
			k := "F" + strconv.Itoa(i)
			v, _ := json.Marshal(val())
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(`"` + k + `":` + string(v))
			keys = append(keys, k+"="+string(v))
		}
		sb.WriteByte('}')
		var got []string
		eachMember([]byte(sb.String()), func(key, val []byte) { got = append(got, string(key)+"="+string(val)) })
		if strings.Join(got, "\n") != strings.Join(keys, "\n") {
			t.Fatalf("eachMember(%s) = %q, want %q", sb.String(), got, keys)
		}
	}
}
