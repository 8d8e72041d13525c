// Package sim is the deterministic simulator: Run plays every role of a
// session in one process, over an in-memory Network, in virtual time and
// from a seed, driving the very same role code as the daemon (package node).
// The same spec and seed give the same result, whatever the number of
// workers.
package sim
