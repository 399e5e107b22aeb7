package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/clrgo/clrevents/schema"
)

// loadSchema reads a schema from an XML manifest or a YAML schema file. The
// kind is told by content (a manifest starts with '<'), and by extension when
// the content does not say.
func loadSchema(path string) (*schema.Schema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if isManifest(path, data) {
		return schema.ParseManifest(path, data)
	}
	return schema.ParseYAML(path, data)
}

// isManifest reports whether data is XML rather than YAML.
func isManifest(path string, data []byte) bool {
	d := bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	d = bytes.TrimLeft(d, " \t\r\n")
	switch {
	case len(d) > 0 && d[0] == '<':
		return true
	case len(d) > 0:
		return false
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".man", ".xml":
		return true
	}
	return false
}
