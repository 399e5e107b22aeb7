package monitor_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/monitor"
)

// testTLS: with a certificate and key, ListenAndServe speaks HTTPS (and
// requires the token over it).
func testTLS(t *testing.T, h *host) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)

	m := monitor.New(monitor.Options{Discover: h.discover})
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- monitor.ListenAndServe(ctx, "127.0.0.1:0", m, monitor.Access{Token: "tok", CertFile: certFile, KeyFile: keyFile}, func(a net.Addr) { addrs <- a })
	}()
	var addr net.Addr
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatal(err)
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", "https://"+addr.String()+"/processes", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Errorf("HTTPS: %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	// Plain HTTP to the TLS port gets no answer it can use.
	if resp, err := http.Get("http://" + addr.String() + "/processes"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP served by the TLS listener")
		}
	}
	// A certificate without its key is refused.
	if err := monitor.ListenAndServe(context.Background(), "127.0.0.1:0", m, monitor.Access{CertFile: certFile}, nil); err == nil {
		t.Error("a certificate without a key was accepted")
	}
	// A certificate that does not load is an error before ready says
	// anything is served.
	missing := filepath.Join(dir, "missing.pem")
	served := false
	err = monitor.ListenAndServe(context.Background(), "127.0.0.1:0", m, monitor.Access{CertFile: missing, KeyFile: keyFile}, func(net.Addr) { served = true })
	if err == nil || served || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing certificate: %v, ready called %v; want an error naming %s before ready", err, served, missing)
	}
}
