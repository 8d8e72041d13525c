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
func SeededRand(seed int64, party Party) io.Reader {
	h := sha256.New()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(seed))
	h.Write(b[:])
	h.Write([]byte(party.String()))
	var key [32]byte
	copy(key[:], h.Sum(nil))
	return rand.NewChaCha8(key)
}
