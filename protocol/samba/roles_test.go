package samba

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
)

// TestReadyBatchesStayIntact: a driver may keep every batch Ready returns
// (the simulator keeps a role's batches until it has delivered a whole
// round), so a batch must never change afterwards, whatever the role queues
// next — small batches cut from a slab, large ones handed over, empty ones
// between them.
func TestReadyBatchesStayIntact(t *testing.T) {
	b := base{rep: &sambapb.Report{}}
	type kept struct {
		got, want []protocol.Message
	}
	var batches []kept
	for step := range 400 {
		n := []int{0, 1, 1, 2, 3, batchChunk, batchChunk + 1, 100}[step%8]
		var want []protocol.Message
		for j := range n {
			m := protocol.Message{To: protocol.Party{Role: RoleOwner, Index: j}, Body: fmt.Appendf(nil, "step %d message %d", step, j)}
			b.sendBody(m.To, m.Body)
			want = append(want, m)
		}
		rd := b.Ready()
		if len(rd.Messages) != n {
			t.Fatalf("step %d: a batch of %d messages, want %d", step, len(rd.Messages), n)
		}
		if n > 0 && n <= batchChunk && cap(rd.Messages) != n {
			t.Fatalf("step %d: a batch of %d messages cut with room for %d: appending to it could write into the next", step, n, cap(rd.Messages))
		}
		batches = append(batches, kept{rd.Messages, want})
	}
	for i, k := range batches {
		if !slices.EqualFunc(k.got, k.want, func(a, b protocol.Message) bool {
			return a.To == b.To && string(a.Body) == string(b.Body)
		}) {
			t.Fatalf("batch %d changed after Ready returned it", i)
		}
	}
}

// TestSlabCut: the slices a slab hands out are empty, capped at what was
// asked, and never share storage.
func TestSlabCut(t *testing.T) {
	var s slab[byte]
	var cuts [][]byte
	for i := range 300 {
		n := []int{1, 7, 60, 100, 5000}[i%5]
		c := s.cut(n, 4096)
		if len(c) != 0 || cap(c) != n {
			t.Fatalf("cut(%d): len %d cap %d, want 0 and %d", n, len(c), cap(c), n)
		}
		c = c[:n]
		for j := range c {
			c[j] = byte(i)
		}
		cuts = append(cuts, c)
	}
	for i, c := range cuts {
		for _, v := range c {
			if v != byte(i) {
				t.Fatalf("cut %d was overwritten by another", i)
			}
		}
	}
}
