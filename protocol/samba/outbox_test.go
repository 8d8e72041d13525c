package samba

import (
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

// TestOutboxBatchesStayIntact: whether its driver recycles or not, a batch
// Ready returned never changes while the driver holds it, whatever the
// role queues afterwards; once the driver recycles, the next batches are
// queued in the arrays it handed back and the bodies it handed back are
// reused.
func TestOutboxBatchesStayIntact(t *testing.T) {
	to := protocol.Party{Role: RoleOwner}
	for _, recycles := range []bool{false, true} {
		var o outbox
		var held []protocol.Ready
		for step := range 3 * batchChunk {
			for j := range 1 + step%3 {
				body := o.body(8)
				if body == nil {
					body = make([]byte, 0, 8)
				}
				o.Send(protocol.Message{To: to, Body: append(body, byte(step), byte(j))})
			}
			rd := o.Ready()
			held = append(held, rd)
			if recycles && len(held) > 4 {
				// The driver is done with the oldest batch it holds.
				old := held[0]
				held = held[1:]
				for _, m := range old.Messages {
					o.RecycleBody(m.Body)
				}
				o.RecycleMessages(old.Messages[:0])
			}
			for _, h := range held {
				if len(h.Messages) == 0 {
					t.Fatalf("recycles=%v: an empty batch", recycles)
				}
				s := int(h.Messages[0].Body[0])
				if len(h.Messages) != 1+s%3 {
					t.Fatalf("recycles=%v: the batch of step %d has %d messages, want %d", recycles, s, len(h.Messages), 1+s%3)
				}
				for j, m := range h.Messages {
					if int(m.Body[0]) != s || int(m.Body[1]) != j {
						t.Fatalf("recycles=%v: the batch of step %d changed after Ready returned it", recycles, s)
					}
				}
			}
		}
		if recycles && (len(o.free) == 0 && len(o.small) == 0) {
			t.Errorf("nothing recycled is held for reuse")
		}
	}
	var o outbox
	if rd := o.Ready(); rd.Messages != nil {
		t.Errorf("an empty outbox handed over %d messages", len(rd.Messages))
	}
}
