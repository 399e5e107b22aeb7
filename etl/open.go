package etl

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// inMemoryLimit is the largest zipped .etl that Open expands into memory;
// larger ones go to a temporary file that Close removes.
const inMemoryLimit = 256 << 20

// Open opens an ETL file for reading in TimeOrder: a .etl file, or a zip
// archive (.zip, .etl.zip, or any file starting with a zip signature)
// holding exactly one .etl, possibly in a folder (gcevents.etl.zip holds
// gcevents/PerfViewData.etl). Close closes the file and removes any
// temporary copy.
func Open(name string) (*Reader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	var sig [4]byte
	n, _ := io.ReadFull(f, sig[:])
	if n == 4 && string(sig[:]) == "PK\x03\x04" {
		r, err := openZip(f, name)
		if err != nil {
			f.Close()
			return nil, err
		}
		return r, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	r, err := NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r.closer = f
	return r, nil
}

func openZip(f *os.File, name string) (*Reader, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var found *zip.File
	for _, zf := range zr.File {
		if zf.FileInfo().IsDir() || !strings.EqualFold(path.Ext(zf.Name), ".etl") {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("%s: holds more than one .etl (%s, %s)", name, found.Name, zf.Name)
		}
		found = zf
	}
	if found == nil {
		return nil, fmt.Errorf("%s: holds no .etl file", name)
	}
	rc, err := found.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, found.Name, err)
	}
	defer rc.Close()
	where := name + ": " + found.Name
	if found.UncompressedSize64 <= inMemoryLimit {
		// Grow as the data arrives: the stated size is not trusted.
		var buf bytes.Buffer
		if _, err := io.Copy(&buf, io.LimitReader(rc, inMemoryLimit+1)); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if buf.Len() <= inMemoryLimit {
			r, err := NewReader(bytes.NewReader(buf.Bytes()))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			// Everything is in memory: the archive is no longer needed.
			return r, f.Close()
		}
		// Larger than it said: spill what we have and the rest.
		return spill(f, io.MultiReader(bytes.NewReader(buf.Bytes()), rc), where)
	}
	return spill(f, rc, where)
}

// spill copies src to a temporary file and reads that.
func spill(zipFile *os.File, src io.Reader, where string) (*Reader, error) {
	tmp, err := os.CreateTemp("", "etl-*.etl")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	cleanup := func() { tmp.Close(); os.Remove(tmp.Name()) }
	if _, err := io.Copy(tmp, src); err != nil {
		cleanup()
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		cleanup()
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	r, err := NewReader(tmp)
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	r.closer = &tempCloser{tmp: tmp, zip: zipFile}
	return r, nil
}

// tempCloser closes and removes the temporary copy and closes the zip.
type tempCloser struct {
	tmp, zip *os.File
}

func (c *tempCloser) Close() error {
	err1 := c.tmp.Close()
	err2 := os.Remove(c.tmp.Name())
	err3 := c.zip.Close()
	return errors.Join(err1, err2, err3)
}
