package drive

import (
	"errors"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

// recyclingRole is a role that records what its driver hands back
// (Recycler), or panics when told to.
type recyclingRole struct {
	testRole
	arrays, bodies int
	panics         bool
}

func (r *recyclingRole) RecycleMessages(ms []protocol.Message) {
	if r.panics {
		panic("recycling")
	}
	r.arrays++
}

func (r *recyclingRole) RecycleBody(body []byte) {
	if r.panics {
		panic("recycling")
	}
	r.bodies++
}

// TestRecycle: Recycle and RecycleBody reach a Recycler role with what
// has storage to reuse, never a role that does not recycle, and a panic
// there fails the party as OpRecycle.
func TestRecycle(t *testing.T) {
	ms := make([]protocol.Message, 1, 4)
	for _, tt := range []struct {
		name           string
		panics         bool
		batch          Batch
		body           []byte
		arrays, bodies int
		op             Op
	}{
		{"array and body", false, Batch{Messages: ms}, []byte{1}, 1, 1, 0},
		{"nothing to reuse", false, Batch{}, nil, 0, 0, 0},
		{"a panic fails the party", true, Batch{Messages: ms}, nil, 0, 0, OpRecycle},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &recyclingRole{panics: tt.panics}
			d := newParty(t, r, Caps{})
			err := d.Recycle(tt.batch)
			if err == nil {
				err = d.RecycleBody(tt.body)
			}
			var de *Error
			switch {
			case tt.op == 0 && err != nil:
				t.Fatalf("recycling failed: %v", err)
			case tt.op != 0 && (!errors.As(err, &de) || de.Op != tt.op || de.Panic == nil):
				t.Fatalf("got %v, want a panic in %s", err, tt.op)
			}
			if r.arrays != tt.arrays || r.bodies != tt.bodies {
				t.Errorf("the role got %d arrays and %d bodies back, want %d and %d", r.arrays, r.bodies, tt.arrays, tt.bodies)
			}
		})
	}
	// A role that does not recycle is never called, and nothing fails.
	d := newParty(t, &testRole{}, Caps{})
	if err := d.Recycle(Batch{Messages: ms}); err != nil {
		t.Fatal(err)
	}
	if err := d.RecycleBody([]byte{1}); err != nil {
		t.Fatal(err)
	}
}
