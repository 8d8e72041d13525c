package node

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/client"
	"github.com/bandit-node/bandit-node/node/config"
)

// writeTestCert writes a self-signed certificate for localhost and
// 127.0.0.1, and its key (mode 0600), into dir, and returns their paths.
func writeTestCert(t testing.TB, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestAPIOverTLS runs a daemon whose control API serves TLS, on every
// address (allow_remote) and on loopback: the CLI's client reaches it when it
// trusts the daemon's certificate (api.ca_file, or api.cert_file), not when
// it trusts another, and not in plain HTTP.
func TestAPIOverTLS(t *testing.T) {
	for _, listen := range []string{"127.0.0.1:0", "0.0.0.0:0"} {
		t.Run(listen, func(t *testing.T) {
			dir := t.TempDir()
			certFile, keyFile := writeTestCert(t, dir, "api")
			otherCert, _ := writeTestCert(t, dir, "other")
			nodes := startNetworkWith(t, 1, func(_ int, cfg *config.Config) {
				cfg.API.Listen, cfg.API.AllowRemote = listen, true
				cfg.API.CertFile, cfg.API.KeyFile = certFile, keyFile
			}, nil)
			tn := nodes[0]
			ctx := context.Background()
			token := filepath.Join(tn.cfg.Node.DataDir, "api.token")

			c, err := client.FromFiles(tn.APIAddr(), token, tn.cfg.API.TrustFile())
			if err != nil {
				t.Fatal(err)
			}
			if info, err := c.Node(ctx); err != nil || info.Name != "node1" {
				t.Fatalf("over TLS, trusting the daemon's certificate: %+v, %v", info, err)
			}
			if _, err := tn.api.Node(ctx); err == nil {
				t.Error("a plain-HTTP client reached a TLS control API")
			}
			other, err := client.FromFiles(tn.APIAddr(), token, otherCert)
			if err != nil {
				t.Fatal(err)
			}
			var unknown x509.UnknownAuthorityError
			if _, err := other.Node(ctx); !errors.As(err, &unknown) {
				t.Errorf("a client trusting another certificate: %v, want an unknown authority", err)
			}

			// The daemon's pprof routes are reachable over TLS too.
			pemBytes, _ := os.ReadFile(certFile)
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(pemBytes)
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.TLSClientConfig.RootCAs = pool
			hc := &http.Client{Transport: tr}
			_, port, _ := net.SplitHostPort(tn.APIAddr())
			base := "https://" + net.JoinHostPort("localhost", port)
			req, _ := http.NewRequest("GET", base+"/debug/pprof/cmdline", nil)
			req.Header.Set("Authorization", "Bearer "+strings.Repeat("t", 32))
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET /debug/pprof/cmdline over TLS: %s", resp.Status)
			}
		})
	}
}

// TestAPIServerTimeouts: the control API's server bounds how long a client
// may take to send a request and to read the answer, and how long an idle
// connection stays open (a slow client cannot hold connections forever).
func TestAPIServerTimeouts(t *testing.T) {
	tn := startNetworkWith(t, 1, nil, nil)[0]
	s := tn.Node.api
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"ReadHeaderTimeout", s.ReadHeaderTimeout}, {"ReadTimeout", s.ReadTimeout}, {"WriteTimeout", s.WriteTimeout}, {"IdleTimeout", s.IdleTimeout}} {
		if f.d <= 0 || f.d > 5*time.Minute {
			t.Errorf("api server's %s = %v, want a positive bound of minutes at most", f.name, f.d)
		}
	}
}

// TestAPIKeyFileMode: a daemon refuses a TLS key readable by others.
func TestAPIKeyFileMode(t *testing.T) {
	cfg := testConfigs(t, 1)[0]
	cfg.API.CertFile, cfg.API.KeyFile = writeTestCert(t, t.TempDir(), "api")
	if err := os.Chmod(cfg.API.KeyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New(cfg, testRegistry(t))
	if err == nil || !strings.Contains(err.Error(), "api.key_file") || !strings.Contains(err.Error(), "readable by others") {
		t.Fatalf("New with a key readable by others: %v", err)
	}
}
