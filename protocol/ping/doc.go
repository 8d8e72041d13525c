// Package ping is the diagnostic protocol: every participant measures the
// round-trip time to every other participant over the session's direct streams,
// count round trips each, and the session's result is the latency matrix
// (min, median, p99 and max). Operators run it before a long session to check
// that every organization can reach every other one, and how fast. It follows
// no paper; it is the smallest complete family, and docs/contributing.md uses
// it as the worked example of adding one.
//
// Roles: participant ×n (2 ≤ n ≤ 256). Each keeps one ping outstanding towards
// every other participant and answers theirs. What each learns: the round-trip
// times of its own links; the initiator learns the whole matrix. No private
// data is involved, and no roles are separated.
//
// The spec's keys, the result and the measured numbers are in
// docs/protocols/ping.md.
package ping
