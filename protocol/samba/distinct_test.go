package samba

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/privacy"
)

// TestDistinct: comp refuses a batch in which one envelope is another's copy
// (Theorem 2's argument needs the controller unable to move a score into
// another position), naming the first such pair, and accepts distinct
// nonces, also those that share their first 8 bytes (the hash table's key).
func TestDistinct(t *testing.T) {
	// box returns an envelope-sized box whose nonce starts with the 8
	// bytes prefix and ends with the 4 bytes tail.
	box := func(prefix uint64, tail uint32) []byte {
		b := make([]byte, privacy.EnvelopeOverhead+8)
		binary.BigEndian.PutUint64(b, prefix)
		binary.BigEndian.PutUint32(b[8:], tail)
		return b
	}
	distinctBoxes := func(k int, prefix func(j int) uint64) [][]byte {
		boxes := make([][]byte, k)
		for j := range boxes {
			boxes[j] = box(prefix(j), uint32(j))
		}
		return boxes
	}
	tests := []struct {
		name  string
		boxes [][]byte
		want  string // "" for no error
	}{
		{"one score", distinctBoxes(1, func(int) uint64 { return 7 }), ""},
		{"K = 100, random-looking prefixes", distinctBoxes(100, func(j int) uint64 { return uint64(j) * 0x9e3779b97f4a7c15 }), ""},
		{"K = 100, every prefix the same, tails differ", distinctBoxes(100, func(int) uint64 { return 0 }), ""},
		{"K = 100, prefixes that hash alike", distinctBoxes(100, func(j int) uint64 { return uint64(j) }), ""},
		{"a copy at the end", func() [][]byte {
			b := distinctBoxes(100, func(j int) uint64 { return uint64(j) << 40 })
			b[99] = b[3]
			return b
		}(), "scores 3 and 99 of step"},
		{"two copies: the first pair is named", func() [][]byte {
			b := distinctBoxes(10, func(j int) uint64 { return uint64(j) })
			b[4] = b[1]
			b[9] = b[0]
			return b
		}(), "scores 0 and 9 of step"},
		{"equal prefixes, one copy among them", func() [][]byte {
			b := distinctBoxes(10, func(int) uint64 { return 42 })
			b[8] = b[5]
			return b
		}(), "scores 5 and 8 of step"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &comp{t: 200, l: 1}
			for range 2 { // the table is reused from batch to batch
				err := c.distinct(tt.boxes)
				switch {
				case tt.want == "" && err != nil:
					t.Fatalf("distinct: %v, want no error", err)
				case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
					t.Fatalf("distinct: %v, want an error with %q", err, tt.want)
				}
			}
		})
	}
}
