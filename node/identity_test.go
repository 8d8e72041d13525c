package node

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
)

// TestIdentityPeerIDReadsWhatCreateIdentityWrote: the peer ID init prints is
// the one id reads back from the key file, and a second init refuses to
// overwrite the key.
func TestIdentityPeerIDReadsWhatCreateIdentityWrote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "identity.key")
	created, err := CreateIdentity(path)
	if err != nil {
		t.Fatal(err)
	}
	read, err := IdentityPeerID(path)
	if err != nil {
		t.Fatal(err)
	}
	if created != read || created == "" {
		t.Errorf("created %q, read back %q", created, read)
	}
	if _, err := CreateIdentity(path); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a second CreateIdentity: %v, want a refusal", err)
	}
	if _, err := IdentityPeerID(filepath.Join(t.TempDir(), "missing.key")); err == nil {
		t.Error("IdentityPeerID of a missing file succeeded")
	}
}
