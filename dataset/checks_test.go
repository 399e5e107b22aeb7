package dataset

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/trace"
)

// TestArchiveChecks: a trace read whole whose zip archive or gzip trailer
// says its bytes are not what was read goes in the dataset with all its
// events, its Stats.Damage the check that failed; a sound one has none.
func TestArchiveChecks(t *testing.T) {
	plain := tracetest.Bytes(t, small)
	crc := crc32.ChecksumIEEE(plain)
	gz := func(flip bool) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(plain)
		w.Close()
		b := buf.Bytes()
		if flip {
			b[len(b)-8] ^= 1 // the trailer's CRC-32
		}
		return b
	}
	var want int64
	for _, c := range []struct {
		name string
		data []byte
		is   error // nil: no damage
	}{
		{"sound.nettrace.zip", tracetest.Zip(t, "a.nettrace", zip.Deflate, plain, crc, uint64(len(plain))), nil},
		{"crc.nettrace.zip", tracetest.Zip(t, "a.nettrace", zip.Deflate, plain, crc+1, uint64(len(plain))), zip.ErrChecksum},
		{"sound.nettrace.gz", gz(false), nil},
		{"crc.nettrace.gz", gz(true), gzip.ErrChecksum},
	} {
		p := filepath.Join(t.TempDir(), c.name)
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := Create(filepath.Join(t.TempDir(), "ds"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		src, err := trace.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		st, err := d.WriteTrace(context.Background(), c.name, src)
		src.Close()
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if want == 0 {
			want = st.Events
		}
		switch {
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case st.Events != want || want == 0:
			t.Errorf("%s: %d events, want %d", c.name, st.Events, want)
		case c.is == nil && st.Damage != nil, c.is != nil && !errors.Is(st.Damage, c.is):
			t.Errorf("%s: damage %v, want %v", c.name, st.Damage, c.is)
		}
	}
}
