package dataset_test

import (
	"context"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/clrgo/clrevents/dataset"
	"github.com/clrgo/clrevents/trace"
)

// A trace written as a Parquet dataset: a table per event type, a table
// for events without a type, the stacks, and a row for the trace. More
// traces go into the same dataset (WriteTrace from several goroutines at
// once), each entirely or not at all; DuckDB, Spark or ClickHouse then
// query them all, e.g.
// read_parquet('DIR/**/*.parquet', union_by_name=true).
func ExampleDataset_WriteTrace() {
	dir, err := os.MkdirTemp("", "clrevents-dataset")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	d, err := dataset.Create(dir, dataset.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	r, err := trace.Open("../testdata/traces/gcevents.etl.zip")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	st, err := d.WriteTrace(context.Background(), "gcevents", r)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d events in %d files\n", st.Events, st.Tables)
	eventTables := 0
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || filepath.Ext(p) != ".parquet" {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "events/") {
			eventTables++
			if !strings.Contains(rel, "/event=GCStart_V2/") {
				return nil // one event table shown of all
			}
		}
		fmt.Println(rel)
		return nil
	})
	fmt.Println(eventTables, "event types")
	// Output:
	// 71 events in 24 files
	// events/provider=Microsoft-Windows-DotNETRuntime/event=GCStart_V2/gcevents-022ef52e679b5aca.parquet
	// generic/gcevents-022ef52e679b5aca.parquet
	// stacks/gcevents-022ef52e679b5aca.parquet
	// traces/gcevents-022ef52e679b5aca.parquet
	// 21 event types
}
