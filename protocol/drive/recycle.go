package drive

import "github.com/bandit-node/bandit-node/protocol"

// Recycler is implemented by a role that reuses the storage of what it
// handed its driver once the driver says it is done with it, so that a
// role sending messages every step need not allocate every step. A driver
// need not recycle anything (the daemon does not: its links keep a frame
// until it is acknowledged); the simulator does, and a role that
// implements Recycler then allocates nothing a step. A role that
// implements it sends each body in one message only.
type Recycler interface {
	// RecycleMessages hands back the array of a batch's messages once the
	// driver has carried them out: the driver keeps neither the array nor
	// any slice of it.
	RecycleMessages(ms []protocol.Message)
	// RecycleBody hands back the body of a message the role sent, once its
	// recipient's handler has returned and nothing else holds it.
	RecycleBody(body []byte)
}

// Recycle hands the party's role the array of batch b's messages, which
// its shell has carried out and keeps no slice of (Recycler); nothing if
// the role does not recycle.
func (d *Party) Recycle(b Batch) (err error) {
	if d.recycler == nil || cap(b.Messages) == 0 || d.err != nil {
		return d.errOrNil()
	}
	defer d.guard(OpRecycle, &err)
	d.recycler.RecycleMessages(b.Messages[:0])
	return nil
}

// RecycleBody hands the party's role body, of a message the party sent,
// which its recipient has handled and nothing holds any longer
// (Recycler); nothing if the role does not recycle.
func (d *Party) RecycleBody(body []byte) (err error) {
	if d.recycler == nil || cap(body) == 0 || d.err != nil {
		return d.errOrNil()
	}
	defer d.guard(OpRecycle, &err)
	d.recycler.RecycleBody(body)
	return nil
}
