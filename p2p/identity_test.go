package p2p

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

func TestGenerateIdentityRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "identity.key")
	priv, id, err := GenerateIdentity(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		t.Errorf("identity file mode = %04o, want 0600", perm)
	}
	loaded, err := LoadIdentity(path)
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Equals(priv) {
		t.Error("loaded key differs from the generated one")
	}
	if got, err := peer.IDFromPrivateKey(loaded); err != nil || got != id {
		t.Errorf("peer ID of loaded key = %v, %v; want %v", got, err, id)
	}
	if priv.Type() != crypto.Ed25519 {
		t.Errorf("key type = %v, want Ed25519", priv.Type())
	}
}

func TestGenerateIdentityRefusesOverwrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "identity.key")
	if err := os.WriteFile(path, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := GenerateIdentity(path)
	if err == nil {
		t.Fatal("GenerateIdentity overwrote an existing file")
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the path", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "precious" {
		t.Errorf("existing file was modified: %q", data)
	}
}

func TestLoadIdentityErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.key")
	if _, _, err := GenerateIdentity(good); err != nil {
		t.Fatal(err)
	}
	goodBytes, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	secp, _, err := crypto.GenerateSecp256k1Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherType, err := crypto.MarshalPrivateKey(secp)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		data    []byte
		mode    os.FileMode
		missing bool
		want    string
	}{
		{name: "world readable", data: goodBytes, mode: 0o644, want: "chmod 600"},
		{name: "group readable", data: goodBytes, mode: 0o640, want: "chmod 600"},
		{name: "garbage", data: []byte("not a key"), mode: 0o600, want: "decoding"},
		{name: "empty", data: nil, mode: 0o600, want: "decoding"},
		{name: "missing", missing: true, want: "opening"},
		{name: "not ed25519", data: otherType, mode: 0o600, want: "Ed25519"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".key")
			if !tc.missing {
				if err := os.WriteFile(path, tc.data, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tc.mode); err != nil {
					t.Fatal(err)
				}
			}
			_, err := LoadIdentity(path)
			if err == nil {
				t.Fatal("LoadIdentity succeeded, want an error")
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the path", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}
