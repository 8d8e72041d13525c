package protocol

import "slices"

// Outbox queues what a role hands its driver between two calls of Ready: the
// messages it sends, in order, its latest progress and its result. A role
// embeds one and encodes its own messages; the Outbox never looks inside a
// body. The zero value is an empty Outbox ready to use; like the Role that
// holds it, it is not safe for concurrent use.
type Outbox struct {
	ready Ready
	spare []Message // what is left of the last slab ReadyCopied cut batches from
}

// Send queues m after the messages queued before it.
func (o *Outbox) Send(m Message) { o.ready.Messages = append(o.ready.Messages, m) }

// Grow makes room for n more messages, for a role that knows how many it is
// about to send.
func (o *Outbox) Grow(n int) { o.ready.Messages = slices.Grow(o.ready.Messages, n) }

// SetProgress records the role's latest progress; it replaces any progress
// recorded since the last Ready.
func (o *Outbox) SetProgress(p Progress) { o.ready.Progress = &p }

// Ask queues a query to the role's environment (see Asker).
func (o *Outbox) Ask(q Query) { o.ready.Queries = append(o.ready.Queries, q) }

// SetResult records the role's result, which a role sets exactly once.
func (o *Outbox) SetResult(r Result) { o.ready.Result = &r }

// Ready returns and clears the queued batch. The batch is handed over whole:
// the next message queued starts a new slice.
func (o *Outbox) Ready() Ready {
	rd := o.ready
	o.ready = Ready{}
	return rd
}

// ReadyCopied is Ready for a role that sends a few messages very often (a
// SAMBA data owner, one a step): a batch of up to chunk messages is copied
// into storage cut from a slab of chunk messages, with room for exactly its
// own messages, and the queue keeps its array for the next batch, so that a
// step allocates only a slab now and then; a larger batch, and an empty one,
// is handed over whole as Ready does.
func (o *Outbox) ReadyCopied(chunk int) Ready {
	rd := o.ready
	o.ready = Ready{}
	switch n := len(rd.Messages); {
	case n == 0:
		o.ready.Messages, rd.Messages = rd.Messages, nil
	case n <= chunk:
		o.ready.Messages = rd.Messages[:0]
		rd.Messages = append(o.cut(n, chunk), rd.Messages...)
	}
	return rd
}

// cut returns an empty slice with room for n ≤ chunk messages, cut from the
// current slab or from a new one of chunk messages.
func (o *Outbox) cut(n, chunk int) []Message {
	if len(o.spare) < n {
		o.spare = make([]Message, chunk)
	}
	out := o.spare[:0:n]
	o.spare = o.spare[n:]
	return out
}
