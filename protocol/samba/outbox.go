package samba

import (
	"slices"

	"github.com/bandit-node/bandit-node/protocol"
)

// outbox queues what a role hands its driver between two calls of Ready,
// as protocol.Outbox does, and takes back the storage of what it handed
// over from a driver that recycles it (drive.Recycler: the simulator), so
// that a role of a simulated session allocates nothing a step: the arrays
// of its batches and the bodies of its messages. With a driver that
// recycles nothing (the daemon) it copies a small batch into storage cut
// from a slab, as protocol.Outbox.ReadyCopied does.
type outbox struct {
	ready protocol.Ready
	// recycles is set once the driver has handed an array back: Ready then
	// hands the queue over whole and queues the next batch in an array
	// from free.
	recycles bool
	free     [][]protocol.Message
	spare    []protocol.Message // what is left of the last slab Ready cut batches from
	// bodies holds the bodies handed back: small ones (a data owner's
	// score, a bit) and batches of K envelopes.
	small, large [][]byte
}

// Recycling bounds: how many arrays and bodies an outbox keeps. A data
// owner has one message in flight at a time, the controller K + 1, comp
// one.
const (
	maxFreeArrays = 8
	maxFreeBodies = 4 * MaxOwners
	smallBody     = 64 // a body of at most this capacity is small
)

func (o *outbox) Send(m protocol.Message) { o.ready.Messages = append(o.ready.Messages, m) }

// Grow makes room for n more messages.
func (o *outbox) Grow(n int) { o.ready.Messages = slices.Grow(o.ready.Messages, n) }

func (o *outbox) SetProgress(p protocol.Progress) { o.ready.Progress = &p }

func (o *outbox) Ask(q protocol.Query) { o.ready.Queries = append(o.ready.Queries, q) }

func (o *outbox) SetResult(r protocol.Result) { o.ready.Result = &r }

// Ready implements protocol.Role. With a recycling driver the queue is
// handed over whole and the next batch queued in a recycled array (an
// empty queue stays: it is not handed over); otherwise a batch of up to
// batchChunk messages (a data owner's one a step) is copied into storage
// cut from a slab, and the queue is kept for the next batch, while a
// larger one (the controller's K bits) is handed over whole.
func (o *outbox) Ready() protocol.Ready {
	rd := o.ready
	o.ready = protocol.Ready{}
	n := len(rd.Messages)
	switch {
	case n == 0:
		o.ready.Messages, rd.Messages = rd.Messages, nil
	case o.recycles:
		if f := len(o.free); f > 0 {
			o.ready.Messages = o.free[f-1]
			o.free[f-1] = nil
			o.free = o.free[:f-1]
		}
	case n <= batchChunk:
		o.ready.Messages = rd.Messages[:0]
		if len(o.spare) < n {
			o.spare = make([]protocol.Message, batchChunk)
		}
		out := o.spare[:0:n]
		o.spare = o.spare[n:]
		rd.Messages = append(out, rd.Messages...)
	}
	return rd
}

// RecycleMessages implements drive.Recycler: ms's array is the role's again.
func (o *outbox) RecycleMessages(ms []protocol.Message) {
	o.recycles = true
	if len(o.free) < maxFreeArrays {
		clear(ms[:cap(ms)]) // the bodies it held are not kept alive
		o.free = append(o.free, ms[:0])
	}
}

// RecycleBody implements drive.Recycler: body, of a message this role sent
// (each body in one message only), is the role's again.
func (o *outbox) RecycleBody(body []byte) {
	if cap(body) <= smallBody {
		if len(o.small) < maxFreeBodies {
			o.small = append(o.small, body[:0])
		}
	} else if len(o.large) < maxFreeArrays {
		o.large = append(o.large, body[:0])
	}
}

// body returns an empty slice with room for n bytes from the bodies handed
// back, or nil if none has the room.
func (o *outbox) body(n int) []byte {
	list := &o.large
	if n <= smallBody {
		list = &o.small
	}
	for l := len(*list); l > 0; l = len(*list) {
		b := (*list)[l-1]
		(*list)[l-1] = nil
		*list = (*list)[:l-1]
		if cap(b) >= n {
			return b
		}
	}
	return nil
}
