// Package drive is the party driver: the layer between one party's role — a
// deterministic state machine with no I/O (protocol.Role) — and whoever
// runs it, as etcd raft's RawNode is between raft's state machine and
// node.run. A Party owns one role and its environment, calls the role with
// a panic guard, answers an immediate environment's queries itself and
// hands back one Batch per call: messages to send, queries left for an
// asynchronous environment, progress and result.
//
// The daemon's session (package node) and the simulator (package
// protocol/sim) are thin shells around it: goroutines, transport,
// persistence and the session's lifecycle stay in node; virtual time,
// delivery order and parallel batches stay in sim. Every decision about
// how a family's roles are driven — ticked or not, activated at a rate
// (protocol.Activated), halted (protocol.Halter), whether they may publish
// on the session topic, whether their messages are small enough to be
// stepped in place (the family's protocol.Info) — is taken here, once, so
// that a family that passes its simulations drives the same way over the
// network.
package drive
