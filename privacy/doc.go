// Package privacy holds the cryptographic and statistical building blocks of
// the protocols: differential-privacy noise (and, as the protocol families
// land, AES-GCM envelopes, Paillier and the MPC engine). It does no
// networking and imports nothing of this module.
package privacy
