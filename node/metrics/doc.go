// Package metrics holds the daemon's Prometheus metrics: sessions by outcome
// and abort class, traffic by kind and protocol, errors and role panics
// (Metrics), and the collectors read when scraped — the data directory's
// health from the store, sessions by state through a function the node
// passes. It registers into a registry of its own, never the global one.
//
// It imports the store and the p2p messengers' counters, nothing of the
// session runtime (TestDependencies).
package metrics
