package schema

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Load reads a schema from a file: an XML manifest (ClrEtwAll.man) or a YAML
// schema, told apart by content (a manifest starts with '<').
func Load(path string) (*Schema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses a manifest or a YAML schema, as Load does; name is used in
// positions. A file named .man or .xml that is not XML is an error that
// says so, not a YAML error; an empty input is an error.
func Parse(name string, data []byte) (*Schema, error) {
	if err := utf16File(name, data); err != nil {
		return nil, err
	}
	body := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(body) == 0 {
		return nil, &Error{Pos: Pos{File: filepath.Base(name)}, Msg: "empty file: no manifest or schema in it"}
	}
	if body[0] == '<' {
		return ParseManifest(name, data)
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".man", ".xml":
		return nil, &Error{Pos: Pos{File: filepath.Base(name), Line: 1}, Msg: fmt.Sprintf("not an XML manifest: a %s file must start with '<' (an <?xml ...?> declaration or the <instrumentationManifest> element)", filepath.Ext(name))}
	}
	return ParseYAML(name, data)
}

// utf16File is the error for a file in UTF-16 (a byte order mark says
// so), which the parsers do not read; nil for another.
func utf16File(name string, data []byte) error {
	if bytes.HasPrefix(data, []byte("\xff\xfe")) || bytes.HasPrefix(data, []byte("\xfe\xff")) {
		return &Error{Pos: Pos{File: filepath.Base(name), Line: 1}, Msg: "the file is UTF-16 (its byte order mark says so); save it as UTF-8 (iconv -f UTF-16 -t UTF-8) and change its <?xml encoding?> to match"}
	}
	return nil
}

// The checked-in schema, built into every program that imports this package
// so that clrgen works in any directory.
//
//go:embed clr.yaml extra.yaml overrides.yaml kernel.yaml
var builtin embed.FS

// Names of the built-in files, as positions and headers show them.
const (
	BuiltinSchemaName    = "clr.yaml"
	BuiltinExtraName     = "extra.yaml"
	BuiltinOverridesName = "overrides.yaml"
	BuiltinKernelName    = "kernel.yaml"
)

// Builtin returns a fresh copy of the checked-in schema (clr.yaml, imported
// from the newest manifest), without the extra providers or overrides.
func Builtin() (*Schema, error) { return parseBuiltin(BuiltinSchemaName) }

// BuiltinExtra returns the checked-in schema of the providers the manifest
// lacks (extra.yaml: the SampleProfiler and EventPipe providers).
func BuiltinExtra() (*Schema, error) { return parseBuiltin(BuiltinExtraName) }

// BuiltinKernel returns a fresh copy of the checked-in schema of the
// Windows kernel's MOF event classes (kernel.yaml), which package
// kernelevents is generated from.
func BuiltinKernel() (*Schema, error) { return parseBuiltin(BuiltinKernelName) }

// BuiltinOverrides returns the checked-in corrections (overrides.yaml).
func BuiltinOverrides() (*Overrides, error) {
	data, err := builtin.ReadFile(BuiltinOverridesName)
	if err != nil {
		return nil, err
	}
	return ParseOverrides(BuiltinOverridesName, data)
}

func parseBuiltin(name string) (*Schema, error) {
	data, err := builtin.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return ParseYAML(name, data)
}
