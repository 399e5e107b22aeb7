package main

import (
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/nettrace"
)

func main() {
	r, err := nettrace.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	info := r.Info()
	fmt.Printf("%+v\n", *info)
	type k struct {
		p   string
		id  uint16
		ver uint8
	}
	type st struct {
		n     int
		first int64
		tid   uint64
		ln    int
	}
	m := map[k]*st{}
	var firstTS int64 = -1
	dec := clrevents.NewDecoder()
	bad := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		if firstTS < 0 {
			firstTS = e.Timestamp
		}
		kk := k{e.Provider, e.ID, e.Version}
		s := m[kk]
		if s == nil {
			s = &st{first: e.Timestamp, tid: e.ThreadID, ln: len(e.Payload)}
			m[kk] = s
		}
		s.n++
		if p, ok := clrevents.ProviderByName(e.Provider); ok {
			_, n, err := dec.Decode(p, e.ID, e.Version, e.PointerSize, e.Payload)
			if err != nil || n != len(e.Payload) {
				if bad < 20 {
					fmt.Println("BAD", kk, n, len(e.Payload), err)
				}
				bad++
			}
		}
	}
	var ks []k
	for kk := range m {
		ks = append(ks, kk)
	}
	sort.Slice(ks, func(i, j int) bool { return fmt.Sprint(ks[i]) < fmt.Sprint(ks[j]) })
	for _, kk := range ks {
		s := m[kk]
		name := ""
		if p, ok := clrevents.ProviderByName(kk.p); ok {
			if ei, ok := clrevents.Lookup(p, kk.id, kk.ver); ok {
				name = ei.Name + " " + ei.TaskName + "/" + ei.OpcodeName
			}
		}
		fmt.Printf("%v %s n=%d sync=%.4f first=%.4f tid=%d len=%d\n", kk, name, s.n,
			float64(s.first-info.SyncTimeQPC)*1000/float64(info.QPCFrequency),
			float64(s.first-firstTS)*1000/float64(info.QPCFrequency), s.tid, s.ln)
	}
	fmt.Println("bad", bad)
}
