package monitor_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/monitor"
)

// TestLoopbackHost: without a token, ListenAndServe serves only requests
// whose Host is a loopback name or address, so that a page whose name an
// attacker made resolve to 127.0.0.1 (DNS rebinding) reads nothing
// through the user's browser; with a token, the token guards.
func TestLoopbackHost(t *testing.T) {
	h := newHost(t)
	h.start(730001, &simruntime.Workload{})
	s := serve(t, h, monitor.Options{}, monitor.Access{})
	port := s.url[strings.LastIndex(s.url, ":")+1:]
	do := func(url, host, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url+"/processes", nil)
		req.Host = host
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for host, ok := range map[string]bool{
		"127.0.0.1:" + port: true, "127.0.0.1": true, "127.1.2.3:" + port: true, "localhost:" + port: true,
		"localhost": true, "LocalHost:" + port: true, "[::1]:" + port: true, "[::1]": true,
		"attacker.example:" + port: false, "attacker.example": false, "localhost.attacker.example:" + port: false,
		"127.0.0.1.attacker.example": false, "10.0.0.1:" + port: false, "[::ffff:10.0.0.1]:" + port: false,
		"0.0.0.0:" + port: false, "[::]:" + port: false,
	} {
		code, body := do(s.url, host, "")
		switch {
		case ok && code != 200:
			t.Errorf("Host %q: %d %s, want 200", host, code, body)
		case !ok && (code != http.StatusMisdirectedRequest || !strings.Contains(body, "not a loopback name or address") || strings.Contains(body, "Sim.App")):
			t.Errorf("Host %q: %d %s, want 421", host, code, body)
		}
	}

	// With a token, any Host that carries it is served: behind a proxy,
	// by a name of one's own.
	const token = "host-test-token"
	st := serve(t, h, monitor.Options{}, monitor.Access{Token: token})
	if code, body := do(st.url, "attacker.example", ""); code != 401 {
		t.Errorf("with a token, without it: %d %s", code, body)
	}
	if code, body := do(st.url, "collector.internal:8080", token); code != 200 {
		t.Errorf("with a token: %d %s", code, body)
	}

	// LoopbackHost alone, for a Handler mounted in a server of one's own.
	lh := monitor.LoopbackHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	// An empty Host (HTTP/1.0 without one; the client above sends the
	// URL's when given none) is refused too.
	for host, code := range map[string]int{"localhost:1": 200, "evil.example:1": 421, "": 421} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = host
		w := httptest.NewRecorder()
		lh.ServeHTTP(w, r)
		if w.Code != code {
			t.Errorf("LoopbackHost, Host %q: %d %s", host, w.Code, w.Body)
		}
	}
}
