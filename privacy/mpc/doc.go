// Package mpc is a secret-sharing engine for a few computing parties and a
// dealer, after CrypTen: arithmetic shares over Z/2^64 with a fixed-point
// encoding, binary (XOR) shares over 64-bit words, Beaver products whose
// masks every party draws from a stream it shares with the dealer (the
// dealer sends party 0 alone a correction per product), carry-save and
// Kogge–Stone adders for the sign, B2A with dealer bits, probabilistic
// truncation with a dealer pair (exact up to one unit, no failure
// probability, for |x| < 2^62; see Trunc), Newton–Raphson reciprocal,
// exponential by repeated squaring, and a one-hot argmax with uniformly
// random tie-breaking. For fewer rounds: a truncation's result used as an
// opened operand without opening it again (Trunc.Open, fused.go), products
// of many factors in one round with the dealer's products of masks
// (many.go), a sign with its first two adder levels merged (MSBMerged) and
// an argmax whose rows' ANDs take one round (ArgMaxOr).
//
// A computation is a Program of Procs — chains of steps. Every opening the
// Procs queue before the next exchange goes into the same round, so
// independent operations share rounds without being written together. The
// engine does no I/O: a driver carries each round's Payload to the other
// parties and hands theirs to Complete. The dealer runs the very same
// Program with no exchanges, which keeps its draws in step with the
// parties' and yields party 0's corrections.
//
// Security (honest-but-curious, no collusion with the dealer): a party sees
// its shares — uniform in the ring — and opened values x − m with m a fresh
// uniform mask, so each opening is uniform and independent of x. The dealer
// sees no data: it knows every mask and no opened value. A truncation opens
// x + r with r uniform in the ring, which is uniform too. The round-saving
// operations open nothing else: fused operands reuse the truncation's
// opening, and products of many factors open each factor once under a fresh
// mask.
package mpc
