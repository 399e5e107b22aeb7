package eventfmt

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/dynamic"
	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/trace"
)

// jsonRows is the rows the long form had when it was built from the JSON
// fields: a row per member, strings unquoted, arrays and objects as JSON.
func jsonRows(obj []byte) string {
	var b []byte
	eachMember(obj, func(key, val []byte) {
		b = append(b, key...)
		b = append(b, ',')
		b = appendCSVValue(b, val)
		b = append(b, '\n')
	})
	return string(b)
}

// columnRows is the rows csvRows writes for the columns AppendColumns
// gives it.
func columnRows(cols []clrimpl.Column, style csvStyle, fill func(clrimpl.ColumnAppender)) string {
	var r csvRows
	r.begin(nil)
	r.describe(cols, style)
	fill(&r)
	return string(r.b)
}

// randomPayload is bytes in which zeros are common, so that strings end
// and counts are small.
func randomPayload(r *rand.Rand, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		switch r.IntN(4) {
		case 0, 1:
			p[i] = byte(r.Uint32())
		case 2:
			p[i] = byte(0x20 + r.IntN(0x5f))
		}
	}
	// Floats at their edges: NaN, infinities, large and small values.
	if r.IntN(3) == 0 && n >= 8 {
		at := r.IntN(n-7) &^ 3
		v := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e21, 1e-7, 123456789, 0.1, math.Copysign(0, -1)}[r.IntN(8)]
		if r.IntN(2) == 0 {
			copy(p[at:], binaryLE64(math.Float64bits(v)))
		} else {
			copy(p[at:], binaryLE64(uint64(math.Float32bits(float32(v)))))
		}
	}
	return p
}

func binaryLE64(v uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

// TestCSVColumnsMatchJSON: for every generated event type, over random
// payloads, the rows built from the columns are the rows the long form
// had when it was built from the JSON fields: the same field names, map
// names, hex, floats (NaN, infinities, exponents), strings and arrays.
func TestCSVColumnsMatchJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 1))
	events := clrevents.Events()
	covered := 0
	for _, info := range events {
		ev := info.New()
		ok := 0
		for try := 0; try < 400 && ok < 20; try++ {
			ptr := 4 << r.IntN(2)
			if _, err := ev.Decode(randomPayload(r, 8+r.IntN(300)), ptr); err != nil {
				continue
			}
			ok++
			want := jsonRows(ev.AppendJSON(nil))
			got := columnRows(info.Columns, csvStyle{names: true}, ev.AppendColumns)
			if got != want {
				t.Fatalf("%s: rows from the columns\n%s\nfrom the JSON\n%s", info, got, want)
			}
		}
		if ok > 0 {
			covered++
		}
	}
	if covered < len(events)*9/10 {
		t.Errorf("only %d of %d event types decoded a random payload", covered, len(events))
	}
	t.Logf("%d of %d event types checked", covered, len(events))
}

// TestCSVRowStyles: the values csvRows writes for each column kind and
// description style.
func TestCSVRowStyles(t *testing.T) {
	cols := []clrimpl.Column{
		{Name: "Reason", Kind: clrimpl.ColumnUint32}, {Name: "Reason_name", Kind: clrimpl.ColumnString},
		{Name: "Address", Kind: clrimpl.ColumnUint64, Hex: true},
		{Name: "Status", Kind: clrimpl.ColumnInt32, Hex: true},
		{Name: "Ratio", Kind: clrimpl.ColumnFloat32},
		{Name: "Big", Kind: clrimpl.ColumnFloat64},
		{Name: "Bad", Kind: clrimpl.ColumnFloat64},
		{Name: "Blob", Kind: clrimpl.ColumnBinary},
		{Name: "Data", Kind: clrimpl.ColumnBinary},
		{Name: "Text", Kind: clrimpl.ColumnString},
		{Name: "Items", Kind: clrimpl.ColumnJSON},
		{Name: "ID", Kind: clrimpl.ColumnGUID},
		{Name: "On", Kind: clrimpl.ColumnBool},
	}
	fill := func(a clrimpl.ColumnAppender) {
		a.Uint(1)
		a.Bytes([]byte("Induced"))
		a.Uint(0x7ff0)
		a.Int(-2)
		a.Float(float64(float32(0.1)))
		a.Float(1e7)
		a.Float(math.NaN())
		a.Bytes(nil)
		a.Bytes([]byte{0xab, 1})
		a.Bytes([]byte("a,\"b\""))
		a.Bytes([]byte(`["x",1]`))
		a.GUID(clrimpl.GUID{1})
		a.Bool(true)
	}
	tail := "Data,0xab01\nText,\"a,\"\"b\"\"\"\nItems,\"[\"\"x\"\",1]\"\nID,00000001-0000-0000-0000-000000000000\nOn,true\n"
	for _, c := range []struct {
		style csvStyle
		want  string
	}{
		{csvStyle{names: true}, "Reason,Induced\nAddress,0x7ff0\nStatus,0xfffffffffffffffe\nRatio,0.10000000149011612\nBig,10000000\nBad,null\nBlob,\n" + tail},
		{csvStyle{names: true, binaryPrefix: true}, "Reason,Induced\nAddress,0x7ff0\nStatus,0xfffffffffffffffe\nRatio,0.10000000149011612\nBig,10000000\nBad,null\nBlob,0x\n" + tail},
		{csvStyle{gFloats: true}, "Reason,1\nReason_name,Induced\nAddress,0x7ff0\nStatus,0xfffffffffffffffe\nRatio,0.1\nBig,1e+07\nBad,NaN\nBlob,\n" + tail},
	} {
		if got := columnRows(cols, c.style, fill); got != c.want {
			t.Errorf("%+v:\n%s\nwant\n%s", c.style, got, c.want)
		}
	}
}

// TestStyleOf: the style of a description's rows follows from its
// Descriptor: a generated type's names its map-bound fields; package
// dynamic's descriptions write empty binary data as "0x", floats in %g
// form where their fields say so (EventSource metadata's), and name
// map-bound fields only when they have maps, so that a field of their own
// named like a name column (X_name after X) keeps its row.
func TestStyleOf(t *testing.T) {
	m := dynamic.NewMap("Colors", false, []dynamic.MapEntry{{Value: 1, Name: "Red"}})
	for _, c := range []struct {
		name string
		d    *clrimpl.Descriptor
		want csvStyle
	}{
		{"generated", (*clrevents.GCStartV2)(nil).Descriptor(), csvStyle{names: true}},
		{"EventSource", (&dynamic.Description{Fields: []dynamic.Field{
			{Name: "F", Kind: dynamic.Float64, Format: dynamic.FormatG},
			{Name: "X", Kind: dynamic.Uint32}, {Name: "X_name", Kind: dynamic.String16}}}).Descriptor(),
			csvStyle{gFloats: true, binaryPrefix: true}},
		{"ETW with a map", (&dynamic.Description{Fields: []dynamic.Field{
			{Name: "F", Kind: dynamic.Float64}, {Name: "C", Kind: dynamic.Uint32, Map: m}}}).Descriptor(),
			csvStyle{names: true, binaryPrefix: true}},
		{"ETW without maps", (&dynamic.Description{Fields: []dynamic.Field{
			{Name: "X", Kind: dynamic.Uint32}, {Name: "X_name", Kind: dynamic.String16}}}).Descriptor(),
			csvStyle{binaryPrefix: true}},
	} {
		if got := styleOf(c.d); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestCSVNameLikeField: an EventSource event with a field X and a string
// field X_name has a row for each, as its JSON has a member for each.
func TestCSVNameLikeField(t *testing.T) {
	fields := []simruntime.Field{{Name: "X", Type: 10}, {Name: "X_name", Type: 18}}
	p := binary.LittleEndian.AppendUint32(nil, 7)
	p = append(p, 'a', 0, 'b', 0, 0, 0)
	src, err := trace.NewReader(bytes.NewReader(simruntime.EventSourceTrace(1, "Test-Source", "Named", fields, p)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := src.Next()
	if err != nil {
		t.Fatal(err)
	}
	dec := Decode(e)
	obj, err := e.AppendJSON(nil)
	if err != nil || dec.Err != nil {
		t.Fatal(err, dec.Err)
	}
	var c CSV
	out := string(c.Append(nil, 0, e, &dec))
	if got, want := strings.ReplaceAll(out, string(c.rows.prefix), ""), jsonRows(obj); got != want || want != "X,7\nX_name,ab\n" {
		t.Errorf("rows\n%s\nfrom the JSON %s\n%s", got, obj, want)
	}
}

// TestAppendCSVValue: JSON values are written as encoding/csv writes them
// after encoding/json unquotes a string value.
func TestAppendCSVValue(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	pool := []string{"a", "Z", "0", " ", "\t", ",", "\"", "\r", "\n", "\\", "\\.", ".", "\u00a0", "\u0085", "é", "\u2028", "\x00", "\x1f", "\xff", "{", "[", ":"}
	for range 30000 {
		var sb strings.Builder
		for range r.IntN(8) {
			sb.WriteString(pool[r.IntN(len(pool))])
		}
		f := sb.String()
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
		var want bytes.Buffer
		w := csv.NewWriter(&want)
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

// TestCSVEventSource: an EventSource event of every scalar field type an
// EventPipe trace describes (and an object), with random values (floats
// at their edges, strings with control characters and unpaired
// surrogates), read through the front door: its CSV rows, from the
// metadata's columns, are the rows the long form had when it was built
// from the JSON fields.
func TestCSVEventSource(t *testing.T) {
	// The NetTrace type codes and their sizes (0: written below).
	types := []struct {
		code byte
		size int
	}{{3, 4}, {4, 2}, {5, 1}, {6, 1}, {7, 2}, {8, 2}, {9, 4}, {10, 4}, {11, 8}, {12, 8}, {13, 4}, {14, 8},
		{16, 8}, {17, 16}, {18, 0}, {20, 0}, {21, 0}, {23, 1}, {26, 1}, {1, 0}}
	var fields []simruntime.Field
	for i, ty := range types {
		f := simruntime.Field{Name: "F" + strconv.Itoa(i), Type: ty.code}
		if ty.code == 1 {
			f.Fields = []simruntime.Field{{Name: "A", Type: 14}, {Name: "B", Type: 18}}
		}
		fields = append(fields, f)
	}
	r := rand.New(rand.NewPCG(25, 2))
	floats := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e21, 1e-7, 123456789, 0.1, 1e6, 100000}
	str := func(p []byte) []byte {
		for range r.IntN(6) {
			u := []uint16{'a', ',', '"', '\n', 0x7, 0xe9, 0x2028, 0xd800, 0xdc00, 0xfffd}[r.IntN(10)]
			p = append(p, byte(u), byte(u>>8))
		}
		return append(p, 0, 0)
	}
	var payloads [][]byte
	for range 300 {
		var p []byte
		for _, ty := range types {
			switch ty.code {
			case 13:
				v := math.Float32bits(float32(floats[r.IntN(len(floats))]))
				p = append(p, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
			case 14:
				p = append(p, binaryLE64(math.Float64bits(floats[r.IntN(len(floats))]))...)
			case 18:
				p = str(p)
			case 20, 21:
				p = binary.AppendUvarint(p, r.Uint64()>>r.IntN(64))
			case 1:
				p = append(p, binaryLE64(math.Float64bits(floats[r.IntN(len(floats))]))...)
				p = str(p)
			default:
				for range ty.size {
					p = append(p, byte(r.Uint32()))
				}
			}
		}
		payloads = append(payloads, p)
	}
	tr := simruntime.EventSourceTrace(1, "Test-Source", "Values", fields, payloads...)
	src, err := trace.NewReader(bytes.NewReader(tr))
	if err != nil {
		t.Fatal(err)
	}
	var c CSV
	n := 0
	for {
		e, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		dec := Decode(e)
		obj, jerr := e.AppendJSON(nil)
		if dec.Err != nil || jerr != nil {
			t.Fatalf("event %d: %v, %v", n, dec.Err, jerr)
		}
		out := string(c.Append(nil, int64(n), e, &dec))
		// Each row is the event's prefix (index to tid), field, value.
		got := strings.ReplaceAll(out, string(c.rows.prefix), "")
		if want := jsonRows(obj); got != want || strings.Count(out, string(c.rows.prefix)) != len(fields) {
			t.Fatalf("event %d: rows from the columns\n%s\nfrom the JSON\n%s", n, got, want)
		}
		n++
	}
	if n != len(payloads) {
		t.Fatalf("%d events read, want %d", n, len(payloads))
	}
}

// TestPrinter: the printer keeps what the filter keeps, counts it, stops
// at the limit, writes the CSV header once, before the first rows; Stats
// counts what it is given.
func TestPrinter(t *testing.T) {
	r, err := trace.Open("../../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := Printer{Filter: Filter{Event: "Method*", PID: -1, TID: -1}, Format: "csv", Limit: 5}
	var out []byte
	var st Stats
	read := 0
	for !p.Done() {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		read++
		dec, ok := p.Keep(e)
		if !ok {
			continue
		}
		if !strings.HasPrefix(dec.Name, "Method") {
			t.Errorf("kept %s", dec.Name)
		}
		st.Add(e, &dec)
		out = p.Append(out, e, &dec)
	}
	if p.Printed != 5 || read <= 5 || p.Undecoded.Err() != nil {
		t.Errorf("printed %d of %d read, %v", p.Printed, read, p.Undecoded.Err())
	}
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 6 || strings.Join(rows[0], ",")+"\n" != CSVHeader || strings.Count(string(out), "index,") != 1 || rows[len(rows)-1][0] != "4" {
		t.Fatalf("CSV %q, %v", out, err)
	}
	var b bytes.Buffer
	st.WriteTo(&b)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) < 3 || lines[0] != "     count        bytes  provider/event" || !strings.HasPrefix(lines[len(lines)-1], "         5 ") || !strings.HasSuffix(lines[1], "  Microsoft-Windows-DotNETRuntimeRundown/MethodDCEndILToNativeMap") {
		t.Errorf("stats:\n%s", b.String())
	}
}

// TestDescribedNotFitting: an event its trace describes whose payload does
// not fit the description is an error in every form (jsonl's "error" and
// "payload" keys, text's error=, CSV's error row), as an event that did
// not decode is: it was written as an event nothing describes
// ({"payload":"0x…"}), which a reader counting errors missed.
func TestDescribedNotFitting(t *testing.T) {
	fields := []simruntime.Field{{Name: "s", Type: 18}, {Name: "d", Type: 14}}
	good := append([]byte{'a', 0, 0, 0}, binaryLE64(math.Float64bits(1.5))...)
	short := []byte{'a', 0, 0, 0, 1, 2, 3} // d needs 8 bytes, 3 left
	tr := simruntime.EventSourceTrace(1, "Test-Source", "Values", fields, good, short)
	src, err := trace.NewReader(bytes.NewReader(tr))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var events []string
	for i := 0; ; i++ {
		e, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		dec := Decode(e)
		j := string(AppendJSON(nil, e, &dec))
		dec = Decode(e)
		txt := string(AppendText(nil, e, &dec))
		dec = Decode(e)
		var c CSV
		csv := string(c.Append(nil, int64(i), e, &dec))
		events = append(events, j)
		bad := i == 1
		if got := strings.Contains(j, `"error":"`) && strings.Contains(j, `"payload":"0x`) && !strings.Contains(j, `"fields"`); got != bad {
			t.Errorf("event %d: jsonl %s", i, j)
		}
		if got := strings.Contains(txt, " error=") && strings.Contains(txt, " payload=0x"); got != bad {
			t.Errorf("event %d: text %s", i, txt)
		}
		if got := strings.Contains(csv, ",error,"); got != bad {
			t.Errorf("event %d: csv %s", i, csv)
		}
		if bad && dec.Err == nil {
			t.Errorf("event %d: no error recorded", i)
		}
	}
	if len(events) != 2 {
		t.Fatalf("%d events, want 2", len(events))
	}
}
