package monitor_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/clrgo/clrevents/diagnostics"
	"github.com/clrgo/clrevents/monitor"
)

// Mount the collector in a server of your own, behind your own access
// rules (here a bearer token), and run it until the context ends.
func Example() {
	m := monitor.New(monitor.Options{
		// nil discovers every .NET process, as clrtrace ps does; this
		// example's host has none.
		Discover: func() ([]diagnostics.Process, error) { return nil, nil },
	})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()

	mux := http.NewServeMux()
	mux.Handle("/dotnet/", http.StripPrefix("/dotnet", monitor.RequireToken("secret", m.Handler())))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/dotnet/processes", nil)
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(resp.Status, " ", string(body))

	stop()
	fmt.Println(<-done) // every session stopped
	// Output:
	// 200 OK []
	// <nil>
}
