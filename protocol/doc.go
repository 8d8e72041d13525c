// Package protocol holds what every protocol family shares: the session spec and
// its validation, the Party and Message types, the Role state-machine interface
// every role of every protocol implements, and the Family interface through which
// the daemon and the simulator (package protocol/sim) drive a protocol without
// knowing which one it is.
//
// Roles follow etcd raft's model: a role is a deterministic state machine with no
// goroutines, no clock of its own, no I/O and injected randomness. A driver feeds
// it messages and ticks and carries out the Ready batches it returns. The daemon
// (package node) and the simulator are the only drivers, and both run the very
// same role code.
//
// This package and those below it import nothing that does networking; see
// deps_test.go.
package protocol
