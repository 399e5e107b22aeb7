// Package tracetest holds what the tests of several packages do with the
// traces in testdata.
package tracetest

import (
	"archive/zip"
	"io"
	"os"
	"strings"
	"testing"
)

// Bytes returns the trace at path: the file's bytes, or for a .zip the
// bytes of its one .nettrace, .netperf or .etl member.
func Bytes(tb testing.TB, path string) []byte {
	tb.Helper()
	if !strings.HasSuffix(path, ".zip") {
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		switch name := strings.ToLower(f.Name); {
		case strings.HasSuffix(name, ".nettrace"), strings.HasSuffix(name, ".netperf"), strings.HasSuffix(name, ".etl"):
			rc, err := f.Open()
			if err != nil {
				tb.Fatal(err)
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil {
				tb.Fatalf("%s: %s: %v", path, f.Name, err)
			}
			return b
		}
	}
	tb.Fatalf("%s: no trace in the zip", path)
	return nil
}
