package privacy

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// EnvelopeKey is an AES-256 key for envelopes.
type EnvelopeKey [32]byte

// EnvelopeNonceSize is the byte length of the random nonce that starts every
// sealed envelope.
const EnvelopeNonceSize = 12

// EnvelopeOverhead is how many bytes Seal adds to a plaintext: the nonce and
// the 16-byte GCM tag.
const EnvelopeOverhead = EnvelopeNonceSize + 16

// envelopeDomain starts the derivation of a channel's key (see
// Envelope.Channel), so that an envelope cannot be confused with any other
// use of the same key. v2: the session and roles are bound through the
// channel key, the step and iteration through the associated data; v1 bound
// all five through the associated data.
const envelopeDomain = "bandit-node/privacy/envelope/v2"

// envelopeADVersion ends an envelope's associated data: the step (8 bytes)
// and iteration (4), then this byte — 13 bytes, the TLS record header's
// length, which AES-GCM's assembly on amd64 hashes in one step.
const envelopeADVersion = 2

// ErrEnvelopeTooShort reports a sealed envelope shorter than
// EnvelopeOverhead.
var ErrEnvelopeTooShort = errors.New("envelope too short")

// ErrEnvelopeAuth reports an envelope that failed authentication: it was
// tampered with, sealed under another key, or replayed, reordered or
// misrouted (its header differs from the one it was sealed for).
var ErrEnvelopeAuth = errors.New("envelope authentication failed")

// Header is bound into an envelope: an envelope opens only with the same
// session, step, iteration, sender role and recipient role it was sealed
// for.
type Header struct {
	Session   string // session ID
	Step      uint64 // protocol step
	Iteration uint32 // iteration (round) within the step
	From, To  string // sender and recipient roles
}

// channelInfo returns the unambiguous encoding of a channel for its key
// derivation: the domain string, then Session, From and To, each prefixed
// by its length as a big-endian uint32.
func channelInfo(session, from, to string) (string, error) {
	for _, s := range []string{session, from, to} {
		if uint64(len(s)) > math.MaxUint32 {
			return "", fmt.Errorf("envelope header field of %d bytes is too long", len(s))
		}
	}
	info := make([]byte, 0, 4*4+len(envelopeDomain)+len(session)+len(from)+len(to))
	for _, s := range []string{envelopeDomain, session, from, to} {
		info = binary.BigEndian.AppendUint32(info, uint32(len(s)))
		info = append(info, s...)
	}
	return string(info), nil
}

// NewEnvelopeKey returns a fresh key read from rand (crypto/rand.Reader in
// real sessions).
func NewEnvelopeKey(rand io.Reader) (EnvelopeKey, error) {
	var k EnvelopeKey
	if _, err := io.ReadFull(rand, k[:]); err != nil {
		return EnvelopeKey{}, fmt.Errorf("generating envelope key: reading randomness: %w", err)
	}
	return k, nil
}

// Envelope seals and opens messages under one key with AES-256-GCM. It is
// safe for concurrent use.
//
// The key itself never encrypts: each channel — a session, sender role and
// recipient role — has its own AES-256 key, HKDF-SHA256-Expand of the
// envelope key over the channel's encoding, so that the session and roles
// are bound by the key and the associated data is only the step and
// iteration. An envelope sealed for one channel fails authentication in
// any other, as it would with the five fields in the associated data.
//
// Nonces are random, so one channel key must seal at most 2³² messages
// (NIST SP 800-38D, §8.3). A caller whose channel can carry more derives a
// key per epoch from its own (SAMBA: one per 65,536 steps, see
// protocol/samba's keyEpoch) rather than relying on sessions being short.
type Envelope struct {
	key EnvelopeKey
}

// NewEnvelope prepares envelopes under key.
func NewEnvelope(key EnvelopeKey) (*Envelope, error) {
	return &Envelope{key: key}, nil
}

// Channel is the envelopes of one session from one sender role to one
// recipient role, with the cipher created once: what a role seals or opens
// every step. It is not safe for concurrent use: it encodes the associated
// data into a buffer of its own, so that sealing and opening allocate
// nothing. Goroutines that seal or open on one channel at once each use a
// Clone.
type Channel struct {
	aead              cipher.AEAD
	session, from, to string
	ad                [13]byte
	// The associated data is written for every envelope: the padding keeps
	// the next object in memory, perhaps another goroutine's clone, off its
	// cache line.
	_ [64]byte
}

// Clone returns a copy of c for another goroutine: with its own buffer for
// the associated data, and the same cipher (AES-GCM from crypto/cipher keeps
// nothing between calls, so it serves both at once).
func (c *Channel) Clone() *Channel {
	d := *c
	return &d
}

// Channel derives the key of the channel from role from to role to in
// session, and prepares its cipher.
func (e *Envelope) Channel(session, from, to string) (*Channel, error) {
	info, err := channelInfo(session, from, to)
	if err != nil {
		return nil, fmt.Errorf("envelope channel: %w", err)
	}
	key, err := hkdf.Expand(sha256.New, e.key[:], info, 32)
	if err != nil {
		return nil, fmt.Errorf("envelope channel key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("envelope cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("envelope cipher: %w", err)
	}
	return &Channel{aead: aead, session: session, from: from, to: to}, nil
}

// associatedData encodes the associated data of the envelope of a step and
// iteration into c.ad: both big-endian, then envelopeADVersion.
func (c *Channel) associatedData(step uint64, iteration uint32) []byte {
	binary.BigEndian.PutUint64(c.ad[:8], step)
	binary.BigEndian.PutUint32(c.ad[8:12], iteration)
	c.ad[12] = envelopeADVersion
	return c.ad[:]
}

// AppendSeal encrypts and authenticates plaintext for the channel's step
// and iteration, appending the envelope to dst and returning the extended
// slice (when dst has the capacity, it allocates nothing): a fresh 12-byte
// random nonce read from rand, then the GCM ciphertext and tag, in all
// EnvelopeOverhead bytes more than plaintext. plaintext must not overlap
// dst's spare capacity. rand may be a buffered reader of crypto/rand:
// nonces need to be unpredictable and never repeat, not secret.
func (c *Channel) AppendSeal(dst []byte, rand io.Reader, step uint64, iteration uint32, plaintext []byte) ([]byte, error) {
	n := len(dst)
	out := slices.Grow(dst, EnvelopeOverhead+len(plaintext))[:n+EnvelopeNonceSize]
	nonce := out[n:]
	if _, err := io.ReadFull(rand, nonce); err != nil {
		return nil, fmt.Errorf("sealing envelope: reading nonce randomness: %w", err)
	}
	return c.aead.Seal(out, nonce, plaintext, c.associatedData(step, iteration)), nil
}

// AppendOpen authenticates and decrypts an envelope sealed on the channel
// for step and iteration, appending the plaintext to dst and returning the
// extended slice (when dst has the capacity, it allocates nothing). dst's
// spare capacity must not overlap sealed. It fails with ErrEnvelopeTooShort
// if sealed cannot hold a nonce and tag, and with ErrEnvelopeAuth if the
// envelope was altered, sealed under another key, or sealed for a different
// header (a replayed, reordered or misrouted envelope: other session, step,
// iteration, sender or recipient).
func (c *Channel) AppendOpen(dst []byte, step uint64, iteration uint32, sealed []byte) ([]byte, error) {
	if len(sealed) < EnvelopeOverhead {
		return nil, fmt.Errorf("opening envelope: %d bytes, need at least %d: %w", len(sealed), EnvelopeOverhead, ErrEnvelopeTooShort)
	}
	pt, err := c.aead.Open(dst, sealed[:EnvelopeNonceSize], sealed[EnvelopeNonceSize:], c.associatedData(step, iteration))
	if err != nil {
		return nil, fmt.Errorf("opening envelope for session %q step %d iteration %d from %q to %q: %w",
			c.session, step, iteration, c.from, c.to, ErrEnvelopeAuth)
	}
	return pt, nil
}

// Seal encrypts and authenticates plaintext for header h; see
// Channel.AppendSeal. A role sealing many envelopes of one channel uses a
// Channel, which derives its key once.
func (e *Envelope) Seal(rand io.Reader, h Header, plaintext []byte) ([]byte, error) {
	c, err := e.Channel(h.Session, h.From, h.To)
	if err != nil {
		return nil, fmt.Errorf("sealing envelope: %w", err)
	}
	return c.AppendSeal(make([]byte, 0, EnvelopeOverhead+len(plaintext)), rand, h.Step, h.Iteration, plaintext)
}

// Open authenticates and decrypts an envelope sealed for header h; see
// Channel.AppendOpen.
func (e *Envelope) Open(h Header, sealed []byte) ([]byte, error) {
	if len(sealed) < EnvelopeOverhead {
		return nil, fmt.Errorf("opening envelope: %d bytes, need at least %d: %w", len(sealed), EnvelopeOverhead, ErrEnvelopeTooShort)
	}
	c, err := e.Channel(h.Session, h.From, h.To)
	if err != nil {
		return nil, fmt.Errorf("opening envelope: %w", err)
	}
	return c.AppendOpen(nil, h.Step, h.Iteration, sealed)
}

// Seal encrypts plaintext under key for header h; see Envelope.Seal.
func Seal(rand io.Reader, key EnvelopeKey, h Header, plaintext []byte) ([]byte, error) {
	e, err := NewEnvelope(key)
	if err != nil {
		return nil, err
	}
	return e.Seal(rand, h, plaintext)
}

// Open authenticates and decrypts an envelope under key for header h; see
// Envelope.Open.
func Open(key EnvelopeKey, h Header, sealed []byte) ([]byte, error) {
	e, err := NewEnvelope(key)
	if err != nil {
		return nil, err
	}
	return e.Open(h, sealed)
}
