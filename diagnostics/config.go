package diagnostics

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// DefaultRundownKeyword is the rundown provider's keyword mask that
// CollectTracing's "requestRundown = true" stands for (method and module
// rundown, as dotnet-trace asks for it).
const DefaultRundownKeyword = 0x80020139

// Event levels, as EventPipe and ETW number them.
const (
	LevelLogAlways     = 0
	LevelCritical      = 1
	LevelError         = 2
	LevelWarning       = 3
	LevelInformational = 4
	LevelVerbose       = 5
)

// WatchConfig is the session for watching a process's events as they
// happen (clrtrace watch): the runtime provider with dotnet-trace's
// default keywords at Informational, and each of providers (EventSource or
// provider names; the runtime provider's is left out, as it is there)
// with every keyword at Verbose; no stacks, a 64 MB buffer.
func WatchConfig(providers ...string) SessionConfig {
	c := SessionConfig{BufferMB: 64, NoStacks: true, Providers: []Provider{
		{Name: RuntimeProvider, Keywords: cpuSamplingRuntimeKeywords, Level: LevelInformational},
	}}
	for _, name := range providers {
		if !strings.EqualFold(name, RuntimeProvider) {
			c.Providers = append(c.Providers, Provider{Name: name, Keywords: ^uint64(0), Level: LevelVerbose})
		}
	}
	return c
}

// CollectConfig combines a profile and a providers list as dotnet-trace
// collect combines its --profile and --providers options: the named
// profile (Profile; cpu-sampling when both are empty), its providers
// followed by those of providers (ParseProviders' list); no profile when
// only the list is given. A provider in both is the list's, in the
// profile's place, as dotnet-trace takes it: the runtime applies the
// first entry of a name and ignores the others, so a session that named
// it twice would lose the list's keywords and level.
func CollectConfig(profile, providers string) (SessionConfig, error) {
	var cfg SessionConfig
	if profile != "" || providers == "" {
		if profile == "" {
			profile = "cpu-sampling"
		}
		c, err := Profile(profile)
		if err != nil {
			return SessionConfig{}, err
		}
		cfg = c
	}
	if providers != "" {
		ps, err := ParseProviders(providers)
		if err != nil {
			return SessionConfig{}, err
		}
		for _, p := range ps {
			i := slices.IndexFunc(cfg.Providers, func(q Provider) bool { return strings.EqualFold(q.Name, p.Name) })
			if i >= 0 {
				cfg.Providers[i] = p
			} else {
				cfg.Providers = append(cfg.Providers, p)
			}
		}
	}
	return cfg, nil
}

// Provider is one provider to enable in a session.
type Provider struct {
	Name     string // the EventSource or provider name
	Keywords uint64 // the keyword mask to enable
	Level    uint32 // 0–5: LogAlways, Critical, Error, Warning, Informational, Verbose
	// Args is the provider's argument string, "key=value;key=value"
	// (EventCounterIntervalSec=1, FilterAndPayloadSpecs=…), sent as is.
	Args string
	// Filter, when not nil, enables or disables events by ID after the
	// keyword and level checks (CollectTracing5, .NET 10 and later).
	Filter *EventFilter
}

// EventFilter is an enable or disable list of event IDs.
type EventFilter struct {
	Enable bool     // true: only IDs; false: all but IDs
	IDs    []uint32 // event IDs
}

// String returns the provider in the Name:0xKeywords:Level[:Args] form
// that ParseProviders reads, its arguments' backslashes and control
// characters escaped.
func (p Provider) String() string {
	s := fmt.Sprintf("%s:0x%X:%d", p.Name, p.Keywords, p.Level)
	if p.Args != "" {
		s += ":" + escapeArgs(p.Args)
	}
	return s
}

// escapeArgs escapes what unescapeArgs undoes: backslashes and control
// characters.
func escapeArgs(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02X`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// SessionConfig describes an EventPipe streaming session. The zero value
// of each option is what dotnet-trace does by default: a 256 MB buffer,
// the default rundown at the end, stacks on every event, dropping events
// when the buffer is full.
type SessionConfig struct {
	Providers []Provider // at least one
	// BufferMB is the runtime's circular buffer size; 0 means 256.
	BufferMB uint32
	// NoRundown asks for no rundown at the end of the session.
	NoRundown bool
	// RundownKeyword, when not 0, replaces the default rundown keywords
	// (CollectTracing4, .NET 9 and later). Ignored with NoRundown.
	RundownKeyword uint64
	// RundownKeywordOnly, with RundownKeyword, asks a runtime that cannot
	// limit the rundown to RundownKeyword (before .NET 9: no
	// CollectTracing4) for no rundown, instead of the default one, which
	// lists every loaded method: dotnet-trace's gc-collect retries so.
	RundownKeywordOnly bool
	// NoStacks asks the runtime not to walk a stack for each event
	// (CollectTracing3, .NET 9 and later; on an older runtime the session
	// falls back to CollectTracing2, which walks them).
	NoStacks bool
	// Blocking makes the runtime block event writers instead of dropping
	// events when the buffer is full (CollectTracing6, .NET 11 and later).
	Blocking bool
}

func (c *SessionConfig) bufferMB() uint32 {
	if c.BufferMB == 0 {
		return 256
	}
	return c.BufferMB
}

func (c *SessionConfig) rundownKeyword() uint64 {
	switch {
	case c.NoRundown:
		return 0
	case c.RundownKeyword != 0:
		return c.RundownKeyword
	}
	return DefaultRundownKeyword
}

func (c *SessionConfig) hasFilter() bool {
	for _, p := range c.Providers {
		if p.Filter != nil {
			return true
		}
	}
	return false
}

// rundownFor is the rundown keyword CollectTracing version v asks for:
// with RundownKeywordOnly, none where v cannot say RundownKeyword.
func (c *SessionConfig) rundownFor(v int) uint64 {
	rk := c.rundownKeyword()
	if v < 4 && c.RundownKeywordOnly && rk != DefaultRundownKeyword {
		return 0
	}
	return rk
}

// MinVersion returns the lowest CollectTracing version (1–6) that can
// express c exactly.
func (c *SessionConfig) MinVersion() int {
	switch rk := c.rundownKeyword(); {
	case c.Blocking:
		return 6
	case c.hasFilter():
		return 5
	case rk != 0 && rk != DefaultRundownKeyword:
		return 4
	case c.NoStacks:
		return 3
	case rk == 0:
		return 2
	}
	return 1
}

// Approximations returns what CollectTracing version v cannot express of
// c, one phrase each; nil when v expresses c exactly.
func (c *SessionConfig) Approximations(v int) []string {
	var out []string
	rk := c.rundownKeyword()
	if v < 6 && c.Blocking {
		out = append(out, "events are dropped, not blocked, when the buffer is full")
	}
	if v < 5 && c.hasFilter() {
		out = append(out, "event ID filters are not applied")
	}
	switch {
	case v < 2 && rk != 0 && rk != DefaultRundownKeyword:
		out = append(out, fmt.Sprintf("the default rundown keywords 0x%X are used instead of 0x%X", DefaultRundownKeyword, rk))
	case v < 4 && rk != 0 && rk != DefaultRundownKeyword && c.RundownKeywordOnly:
		out = append(out, fmt.Sprintf("no rundown is written instead of one of keywords 0x%X", rk))
	case v < 4 && rk != 0 && rk != DefaultRundownKeyword:
		out = append(out, fmt.Sprintf("the default rundown keywords 0x%X are used instead of 0x%X", DefaultRundownKeyword, rk))
	}
	if v < 3 && c.NoStacks {
		out = append(out, "stacks are collected")
	}
	if v < 2 && rk == 0 {
		out = append(out, "the runtime writes a rundown at the end")
	}
	return out
}

// EncodeCollectTracing returns the payload of CollectTracing version v
// (1–6) for c, as the protocol document and the .NET client lay it out.
// A version too old for some of c's options sends the closest request it
// can (Approximations lists what is lost).
func EncodeCollectTracing(v int, c *SessionConfig) ([]byte, error) {
	if v < 1 || v > 6 {
		return nil, fmt.Errorf("CollectTracing version %d: the versions are 1 to 6", v)
	}
	if len(c.Providers) == 0 {
		return nil, fmt.Errorf("%v: no providers", CollectTracingCommand(v))
	}
	const formatNetTrace = 1
	var b []byte
	if v >= 5 {
		b = binary.LittleEndian.AppendUint32(b, 0) // session type: IPC stream
	}
	b = binary.LittleEndian.AppendUint32(b, c.bufferMB())
	b = binary.LittleEndian.AppendUint32(b, formatNetTrace)
	rk := c.rundownFor(v)
	switch {
	case v >= 4:
		b = binary.LittleEndian.AppendUint64(b, rk)
	case v >= 2:
		b = appendBool(b, rk != 0)
	}
	if v >= 3 {
		b = appendBool(b, !c.NoStacks)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.Providers)))
	for _, p := range c.Providers {
		if p.Level > LevelVerbose {
			// The runtime refuses the whole request as badly encoded.
			return nil, fmt.Errorf("%v: provider %s: level %d; the levels are 0 (LogAlways) to 5 (Verbose)", CollectTracingCommand(v), p.Name, p.Level)
		}
		b = binary.LittleEndian.AppendUint64(b, p.Keywords)
		b = binary.LittleEndian.AppendUint32(b, p.Level)
		b = AppendString(b, p.Name)
		b = AppendString(b, p.Args)
		if v >= 5 {
			if p.Filter == nil {
				b = append(b, 0, 0, 0, 0, 0)
			} else {
				b = appendBool(b, p.Filter.Enable)
				b = binary.LittleEndian.AppendUint32(b, uint32(len(p.Filter.IDs)))
				for _, id := range p.Filter.IDs {
					b = binary.LittleEndian.AppendUint32(b, id)
				}
			}
		}
	}
	if v >= 6 {
		mode := uint32(0)
		if c.Blocking {
			mode = 1
		}
		b = binary.LittleEndian.AppendUint32(b, mode)
	}
	if len(b) > MaxPayload {
		return nil, fmt.Errorf("%v: the request is %d bytes, more than a message holds (%d)", CollectTracingCommand(v), len(b), MaxPayload)
	}
	return b, nil
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

var levelNames = map[string]uint32{
	"logalways": LevelLogAlways, "critical": LevelCritical, "error": LevelError,
	"warning": LevelWarning, "informational": LevelInformational, "info": LevelInformational,
	"verbose": LevelVerbose,
}

// ParseProviders reads providers as dotnet-trace's --providers does: a
// comma-separated list of Name[:Keywords[:Level[:Args]]]. Keywords are
// hexadecimal (with or without 0x; "*" for all) and the level is 0–5 or
// a name (critical, error, warning, informational, verbose). Args is
// "key=value;…", where a value may be double-quoted to hold commas,
// colons or semicolons, and is unescaped as dotnet-trace unescapes it
// (.NET's Regex.Unescape: \r, \n, \t, \xHH, \uHHHH and the like;
// a backslash before a letter or digit that is no such escape is an
// error, before anything else it stands for that character), so that
// FilterAndPayloadSpecs copied from a dotnet-trace command line reach
// the runtime as they reach it from there.
//
// A name without keywords or level takes every keyword at Verbose, as
// dotnet-trace did until February 2024 (since, dotnet-trace takes
// keywords 0 at Informational, which enables only an EventSource's
// events declared without keywords). A name given more than once is one
// provider, as dotnet-trace merges it: the keywords of all its entries,
// the most verbose level (LogAlways, 0, counting as the most), and the
// arguments of the one entry that has any (two with arguments are an
// error).
func ParseProviders(spec string) ([]Provider, error) {
	var out []Provider
	for _, item := range splitOutsideQuotes(spec, ',', -1) {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		parts := splitOutsideQuotes(item, ':', 4)
		p := Provider{Name: strings.TrimSpace(parts[0]), Keywords: ^uint64(0), Level: LevelVerbose}
		if p.Name == "" {
			return nil, fmt.Errorf("provider %q: no name", item)
		}
		if strings.ContainsRune(p.Name, '"') {
			return nil, fmt.Errorf("provider %q: a name holds no quotes (they are for argument values)", item)
		}
		if len(parts) > 1 && parts[1] != "" && parts[1] != "*" {
			k := strings.TrimPrefix(strings.TrimPrefix(parts[1], "0x"), "0X")
			v, err := strconv.ParseUint(k, 16, 64)
			if err != nil {
				return nil, fmt.Errorf("provider %s: keywords %q are not a hexadecimal mask", p.Name, parts[1])
			}
			p.Keywords = v
		}
		if len(parts) > 2 && parts[2] != "" {
			l, ok := levelNames[strings.ToLower(parts[2])]
			if !ok {
				n, err := strconv.ParseUint(parts[2], 10, 8)
				if err != nil || n > LevelVerbose {
					return nil, fmt.Errorf("provider %s: level %q is not 0–5 or a level name", p.Name, parts[2])
				}
				l = uint32(n)
			}
			p.Level = l
		}
		if len(parts) > 3 {
			a, err := unescapeArgs(parts[3])
			if err != nil {
				return nil, fmt.Errorf("provider %s: arguments %q: %v", p.Name, parts[3], err)
			}
			p.Args = a
		}
		i := slices.IndexFunc(out, func(q Provider) bool { return strings.EqualFold(q.Name, p.Name) })
		if i < 0 {
			out = append(out, p)
			continue
		}
		q := &out[i]
		if q.Args != "" && p.Args != "" {
			return nil, fmt.Errorf("provider %s is given more than once with arguments", p.Name)
		}
		q.Keywords |= p.Keywords
		if q.Level != LevelLogAlways && (p.Level == LevelLogAlways || p.Level > q.Level) {
			q.Level = p.Level
		}
		if q.Args == "" {
			q.Args = p.Args
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no providers in %q", spec)
	}
	return out, nil
}

// unescapeArgs undoes the escapes .NET's Regex.Unescape knows, which
// dotnet-trace applies to a provider's arguments: \a \b \t \n \v \f
// \r \e, \cX (control-X), \xHH, \uHHHH and up to three octal digits;
// a backslash before any other character that is not a letter, digit or
// underscore stands for that character.
func unescapeArgs(s string) (string, error) {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return s, nil
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 == len(s) {
			return "", fmt.Errorf("a backslash at the end")
		}
		at := i
		e := s[i+1]
		i += 2
		hex := func(n int) (rune, error) {
			if i+n > len(s) {
				return 0, fmt.Errorf("\\%c at byte %d needs %d hexadecimal digits", e, at, n)
			}
			v, err := strconv.ParseUint(s[i:i+n], 16, 32)
			if err != nil {
				return 0, fmt.Errorf("\\%c at byte %d needs %d hexadecimal digits", e, at, n)
			}
			i += n
			return rune(v), nil
		}
		switch e {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'v':
			b.WriteByte(11)
		case 'f':
			b.WriteByte(12)
		case 'r':
			b.WriteByte('\r')
		case 'e':
			b.WriteByte(27)
		case 'x', 'u':
			n := 2
			if e == 'u' {
				n = 4
			}
			r, err := hex(n)
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
		case 'c':
			if i == len(s) || !('a' <= s[i]|0x20 && s[i]|0x20 <= 'z') {
				return "", fmt.Errorf("\\c at byte %d needs a letter", at)
			}
			b.WriteByte(s[i]&^0x20 - '@')
			i++
		default:
			if '0' <= e && e <= '7' {
				v := rune(e - '0')
				for n := 1; n < 3 && i < len(s) && '0' <= s[i] && s[i] <= '7'; n++ {
					v = v*8 + rune(s[i]-'0')
					i++
				}
				b.WriteRune(v & 0xFF)
				break
			}
			if e == '_' || '0' <= e && e <= '9' || 'a' <= e|0x20 && e|0x20 <= 'z' {
				return "", fmt.Errorf("unrecognized escape \\%c at byte %d", e, at)
			}
			b.WriteByte(e)
		}
	}
	return b.String(), nil
}

// splitOutsideQuotes splits s at sep where sep is not inside double
// quotes, into at most n parts (n < 0: all).
func splitOutsideQuotes(s string, sep byte, n int) []string {
	var out []string
	quoted := false
	start := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case s[i] == sep && !quoted && (n < 0 || len(out) < n-1):
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// Provider names the profiles use.
const (
	RuntimeProvider       = "Microsoft-Windows-DotNETRuntime"
	RuntimePrivate        = "Microsoft-Windows-DotNETRuntimePrivate"
	SampleProfilerName    = "Microsoft-DotNETCore-SampleProfiler"
	SystemRuntimeCounters = "System.Runtime"
)

// Runtime provider keywords the profiles use (ClrEtwAll.man).
const (
	KeywordGC                  = 0x1
	KeywordGCHandle            = 0x2
	KeywordAssemblyLoader      = 0x4
	KeywordLoader              = 0x8
	KeywordJit                 = 0x10
	KeywordNGen                = 0x20
	KeywordContention          = 0x4000
	KeywordException           = 0x8000
	KeywordThreading           = 0x10000
	KeywordJittedMethodILToNat = 0x20000
	KeywordType                = 0x80000
	KeywordGCHeapAndTypeNames  = 0x1000000
	KeywordCompilation         = 0x1000000000
)

// dotnet-trace's default runtime keywords for CPU sampling (its
// cpu-sampling profile, the default before version 10).
const cpuSamplingRuntimeKeywords = 0x00000014C14FCCBD

// dotnet-trace's dotnet-common keywords (version 10's default with
// dotnet-sampled-thread-time): GC, AssemblyLoader, Loader, JIT,
// Exception, Threading, JittedMethodILToNativeMap, Compilation.
const dotnetCommonKeywords = KeywordGC | KeywordAssemblyLoader | KeywordLoader | KeywordJit |
	KeywordException | KeywordThreading | KeywordJittedMethodILToNat | KeywordCompilation

var profiles = map[string]struct {
	about string
	cfg   SessionConfig
}{
	"cpu-sampling": {"CPU samples with stacks, the runtime's default events, method rundown", SessionConfig{Providers: []Provider{
		{Name: SampleProfilerName, Keywords: 0xF00000000000, Level: LevelInformational},
		{Name: RuntimeProvider, Keywords: cpuSamplingRuntimeKeywords, Level: LevelInformational},
	}}},
	"gc": {"GC start/end, heap statistics and suspensions, without stacks or rundown", SessionConfig{
		Providers: []Provider{{Name: RuntimeProvider, Keywords: KeywordGC, Level: LevelInformational}},
		NoStacks:  true, NoRundown: true,
	}},
	"gc-verbose": {"GC collections and allocation ticks, handles and exceptions, at Verbose, with stacks (dotnet-trace's gc-verbose)", SessionConfig{Providers: []Provider{
		{Name: RuntimeProvider, Keywords: KeywordGC | KeywordGCHandle | KeywordException, Level: LevelVerbose},
	}}},
	"gc-collect": {"GC collections only, at low overhead, with a GC-only rundown (dotnet-trace's gc-collect)", SessionConfig{
		Providers: []Provider{
			{Name: RuntimeProvider, Keywords: KeywordGC, Level: LevelInformational},
			{Name: RuntimePrivate, Keywords: KeywordGC, Level: LevelInformational},
		},
		RundownKeyword: KeywordGC, RundownKeywordOnly: true,
	}},
	"dotnet-common": {"the runtime's GC, loader, JIT, exception and threading events, at low overhead (dotnet-trace's dotnet-common)", SessionConfig{Providers: []Provider{
		{Name: RuntimeProvider, Keywords: dotnetCommonKeywords, Level: LevelInformational},
	}}},
	"dotnet-sampled-thread-time": {"managed thread stacks sampled about every 10 ms (dotnet-trace's dotnet-sampled-thread-time)", SessionConfig{Providers: []Provider{
		{Name: SampleProfilerName, Level: LevelInformational},
	}}},
	"jit": {"JIT compilation, loader and IL-to-native maps, with rundown", SessionConfig{Providers: []Provider{
		{Name: RuntimeProvider, Keywords: KeywordJit | KeywordLoader | KeywordNGen | KeywordJittedMethodILToNat | KeywordCompilation, Level: LevelVerbose},
	}}},
	"exceptions": {"exceptions thrown and caught, with stacks", SessionConfig{Providers: []Provider{
		{Name: RuntimeProvider, Keywords: KeywordException, Level: LevelInformational},
	}}},
	"contention": {"lock contention and thread pool events, with stacks", SessionConfig{Providers: []Provider{
		{Name: RuntimeProvider, Keywords: KeywordContention | KeywordThreading, Level: LevelInformational},
	}}},
}

// Profile returns a named session configuration (ProfileNames lists
// them). cpu-sampling is dotnet-trace's profile of that name before its
// version 10 (since, dotnet-trace's cpu-sampling is a Linux kernel
// profile, and its default is dotnet-common with
// dotnet-sampled-thread-time); gc-verbose, gc-collect, dotnet-common and
// dotnet-sampled-thread-time are dotnet-trace's profiles of those names;
// gc, jit, exceptions and contention are ours.
func Profile(name string) (SessionConfig, error) {
	p, ok := profiles[name]
	if !ok {
		return SessionConfig{}, fmt.Errorf("unknown profile %q (the profiles are %s)", name, strings.Join(ProfileNames(), ", "))
	}
	c := p.cfg
	c.Providers = append([]Provider(nil), p.cfg.Providers...)
	return c, nil
}

// ProfileNames lists the named profiles, sorted.
func ProfileNames() []string {
	var n []string
	for k := range profiles {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// ProfileAbout returns a profile's one-line description.
func ProfileAbout(name string) string { return profiles[name].about }

// CountersConfig is the session dotnet-counters starts for the given
// EventCounters providers (System.Runtime when none), reporting every
// interval seconds: keywords 0 at Informational, as dotnet-counters asks
// since .NET 5's tools (the EventCounters reports have no keyword, and an
// EventSource's other events stay off), no rundown and no stacks.
//
// An EventSource reports at the shortest interval any session asked of
// it: with another session on the same source at a shorter interval,
// reports come more often than asked (counters.Counter.Series names the
// interval a report was made at).
func CountersConfig(intervalSec float64, providers ...string) SessionConfig {
	if len(providers) == 0 {
		providers = []string{SystemRuntimeCounters}
	}
	c := SessionConfig{NoRundown: true, NoStacks: true, BufferMB: 16}
	for _, name := range providers {
		c.Providers = append(c.Providers, Provider{
			Name: name, Keywords: 0, Level: LevelInformational,
			Args: "EventCounterIntervalSec=" + strconv.FormatFloat(intervalSec, 'f', -1, 64),
		})
	}
	return c
}
