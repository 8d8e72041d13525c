package protocol

import (
	"crypto/sha256"
	"encoding/binary"
	"io"
	"math/rand/v2"
)

// SeededRand returns a deterministic stream of randomness for one party of a
// simulated session. It is for simulation and tests only: real sessions use
// crypto/rand.
func SeededRand(seed int64, party Party) io.Reader { return seededStream(seed, party.String()) }

// SeededEnvironmentRand is the stream of party's simulated environment in a
// simulation seeded with seed: apart from the party's own (SeededRand), so
// that what the world answers does not depend on what the role draws.
func SeededEnvironmentRand(seed int64, party Party) io.Reader {
	return seededStream(seed, "environment of "+party.String())
}

// seededStream is a ChaCha8 stream keyed by seed and label.
func seededStream(seed int64, label string) io.Reader {
	h := sha256.New()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(seed))
	h.Write(b[:])
	h.Write([]byte(label))
	var key [32]byte
	copy(key[:], h.Sum(nil))
	return rand.NewChaCha8(key)
}
