package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"

	"github.com/clrgo/clrevents/schema"
)

var importCommand = &command{
	name:    "import",
	summary: "write the YAML schema from an event manifest (ClrEtwAll.man)",
	usage:   "import [-o schema/clr.yaml] MANIFEST",
	run:     runImport,
}

// runImport loads a manifest and writes its YAML schema, only when the bytes
// change, so that an unchanged import leaves the file (and its time stamp)
// alone. -o - writes to stdout.
func runImport(c *command, args []string, stdout, stderr io.Writer) int {
	fs := newFlags(c, stderr)
	out := fs.String("o", "schema/clr.yaml", "the YAML schema to write; - for stdout")
	if st, done := parseFlags(fs, args); done {
		return st
	}
	if fs.NArg() != 1 {
		return usageError(c, stderr, "want one MANIFEST, have %d arguments", fs.NArg())
	}
	s, err := schema.LoadManifest(fs.Arg(0))
	if err != nil {
		return inputError(stderr, err)
	}
	data, err := schema.MarshalYAML(s)
	if err != nil {
		return inputError(stderr, err)
	}
	if *out == "-" {
		if _, err := stdout.Write(data); err != nil {
			return inputError(stderr, err)
		}
		return exitOK
	}
	if err := writeIfChanged(*out, data); err != nil {
		return inputError(stderr, err)
	}
	return exitOK
}

// writeIfChanged writes data to path unless the file already holds exactly
// data. It writes a temporary file and renames it, so that a failed write
// never leaves a truncated schema.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
