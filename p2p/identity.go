package p2p

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// maxIdentityFileSize bounds how much of an identity file LoadIdentity reads.
// A marshalled Ed25519 key is 68 bytes; anything near this limit is not a key.
const maxIdentityFileSize = 64 << 10

// GenerateIdentity creates a new Ed25519 key and writes it, as
// crypto.MarshalPrivateKey bytes, to path with mode 0600. It refuses to
// overwrite an existing file. It returns the key and the peer ID derived from it.
func GenerateIdentity(path string) (crypto.PrivKey, peer.ID, error) {
	priv, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, "", fmt.Errorf("generating an Ed25519 identity key: %w", err)
	}
	data, err := crypto.MarshalPrivateKey(priv)
	if err != nil {
		return nil, "", fmt.Errorf("encoding the new identity key: %w", err)
	}
	id, err := peer.IDFromPrivateKey(priv)
	if err != nil {
		return nil, "", fmt.Errorf("deriving the peer ID of the new identity key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, "", fmt.Errorf("identity key file %s already exists; refusing to overwrite it (move it away first if you really want a new identity): %w", path, err)
	}
	if err != nil {
		return nil, "", fmt.Errorf("creating identity key file %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return nil, "", fmt.Errorf("writing identity key file %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return nil, "", fmt.Errorf("syncing identity key file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return nil, "", fmt.Errorf("closing identity key file %s: %w", path, err)
	}
	return priv, id, nil
}

// LoadIdentity reads an identity key written by GenerateIdentity. It rejects a
// file that group or others may read or write, and a key that is not Ed25519.
func LoadIdentity(path string) (crypto.PrivKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening identity key file %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("checking identity key file %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("identity key file %s is not a regular file", path)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("identity key file %s has mode %04o, which lets other users access the private key; run `chmod 600 %s`", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIdentityFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading identity key file %s: %w", path, err)
	}
	if len(data) > maxIdentityFileSize {
		return nil, fmt.Errorf("identity key file %s is larger than %d bytes; it is not an identity key", path, maxIdentityFileSize)
	}
	priv, err := crypto.UnmarshalPrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("decoding identity key file %s: %w", path, err)
	}
	if priv.Type() != crypto.Ed25519 {
		return nil, fmt.Errorf("identity key file %s holds a %s key; bandit-node identities are Ed25519", path, priv.Type())
	}
	return priv, nil
}
