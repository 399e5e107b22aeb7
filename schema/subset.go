package schema

import (
	"fmt"
	"path"
	"strings"
)

// Subset selects events: those of providers whose name matches one of
// Providers, whose symbol matches one of Events, and that carry one of the
// Keywords bits. An empty list or a zero mask selects everything. Globs use
// path.Match syntax; provider globs ignore case ("*dotnetruntime"), event
// globs do not ("GC*" is not "gcStart").
type Subset struct {
	Providers []string
	Events    []string
	Keywords  uint64
}

// IsAll reports whether the subset selects everything.
func (u Subset) IsAll() bool {
	return len(u.Providers) == 0 && len(u.Events) == 0 && u.Keywords == 0
}

// Check reports a malformed glob.
func (u Subset) Check() error {
	for _, g := range append(append([]string(nil), u.Providers...), u.Events...) {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("bad glob %q: %v", g, err)
		}
	}
	return nil
}

// Apply keeps in s only the selected events, the templates they use, the
// maps those templates use, and the providers left with events; keywords,
// tasks and opcodes stay (they describe the provider). It modifies s in
// place and returns an error if nothing is left.
func (u Subset) Apply(s *Schema) error {
	if err := u.Check(); err != nil {
		return err
	}
	var keep []*Provider
	for _, p := range s.Providers {
		if !u.matchProvider(p.Name) {
			continue
		}
		var events []*Event
		for _, e := range p.Events {
			if u.matchEvent(p, e) {
				events = append(events, e)
			}
		}
		if len(events) == 0 {
			continue
		}
		p.Events = events
		usedT := map[string]bool{}
		for _, e := range events {
			usedT[e.Template] = true
		}
		var templates []*Template
		usedM := map[string]bool{}
		for _, t := range p.Templates {
			if usedT[t.TID] {
				templates = append(templates, t)
				markMaps(t.Fields, usedM)
			}
		}
		p.Templates = templates
		var maps []*Map
		for _, m := range p.Maps {
			if usedM[m.Name] {
				maps = append(maps, m)
			}
		}
		p.Maps = maps
		keep = append(keep, p)
	}
	s.Providers = keep
	if len(keep) == 0 {
		// The file read (a YAML schema's own name, not the manifest
		// it was imported from, which the user may not have).
		name := s.SourcePos.File
		if name == "" {
			name = s.Source
		}
		return fmt.Errorf("%s: the subset (%s) selects no event", name, u)
	}
	return nil
}

func markMaps(fs []*Field, used map[string]bool) {
	for _, f := range fs {
		if f.Map != "" {
			used[f.Map] = true
		}
		markMaps(f.Fields, used)
	}
}

func (u Subset) matchProvider(name string) bool {
	if len(u.Providers) == 0 {
		return true
	}
	for _, g := range u.Providers {
		if ok, _ := path.Match(strings.ToLower(g), strings.ToLower(name)); ok {
			return true
		}
	}
	return false
}

func (u Subset) matchEvent(p *Provider, e *Event) bool {
	if len(u.Events) > 0 {
		ok := false
		for _, g := range u.Events {
			if m, _ := path.Match(g, e.Symbol); m {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if u.Keywords == 0 {
		return true
	}
	for _, kw := range e.Keywords {
		if k := p.Keyword(kw); k != nil && k.Mask&u.Keywords != 0 {
			return true
		}
	}
	return false
}

// String describes the subset: "providers *DotNETRuntime, events GC*".
func (u Subset) String() string {
	var parts []string
	if len(u.Providers) > 0 {
		parts = append(parts, "providers "+strings.Join(u.Providers, ","))
	}
	if len(u.Events) > 0 {
		parts = append(parts, "events "+strings.Join(u.Events, ","))
	}
	if u.Keywords != 0 {
		parts = append(parts, fmt.Sprintf("keywords %#x", u.Keywords))
	}
	if len(parts) == 0 {
		return "everything"
	}
	return strings.Join(parts, ", ")
}
