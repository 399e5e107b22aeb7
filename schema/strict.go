package schema

import (
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// checkKeys reports every mapping key in the YAML document that names no
// field of the Go type it decodes into (a typo such as "cout:" for
// "count:" would otherwise be dropped without a word). It walks the node
// tree alongside t, following yaml tags.
func checkKeys(data []byte, t reflect.Type, file string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil // the typed decode reports syntax errors
	}
	var l errList
	var walk func(n *yaml.Node, t reflect.Type, depth int)
	walk = func(n *yaml.Node, t reflect.Type, depth int) {
		if depth > 64 {
			return
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case n.Kind == yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, t, depth+1)
			}
		case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
			for _, c := range n.Content {
				walk(c, t.Elem(), depth+1)
			}
		case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
			fields := yamlFields(t)
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				ft, ok := fields[k.Value]
				if !ok {
					l.add(Pos{File: file, Line: k.Line}, "YAML", "unknown key %q (known: %s)", k.Value, knownKeys(fields))
					continue
				}
				walk(v, ft, depth+1)
			}
		}
	}
	walk(&doc, t, 0)
	return l.err()
}

// yamlFields maps the yaml names of t's fields to their types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		m[name] = f.Type
	}
	return m
}

func knownKeys(m map[string]reflect.Type) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}
