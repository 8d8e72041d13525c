package privacy

import (
	"crypto/aes"
	"crypto/cipher"
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

// envelopeDomain starts the associated data, so that an envelope cannot be
// confused with any other use of the same key.
const envelopeDomain = "bandit-node/privacy/envelope/v1"

// ErrEnvelopeTooShort reports a sealed envelope shorter than
// EnvelopeOverhead.
var ErrEnvelopeTooShort = errors.New("envelope too short")

// ErrEnvelopeAuth reports an envelope that failed authentication: it was
// tampered with, sealed under another key, or replayed, reordered or
// misrouted (its header differs from the one it was sealed for).
var ErrEnvelopeAuth = errors.New("envelope authentication failed")

// Header is bound into an envelope's associated data: an envelope opens only
// with the same session, step, iteration, sender role and recipient role it
// was sealed for.
type Header struct {
	Session   string // session ID
	Step      uint64 // protocol step
	Iteration uint32 // iteration (round) within the step
	From, To  string // sender and recipient roles
}

// associatedData returns the unambiguous encoding of h: the domain string,
// then Session, Step, Iteration, From and To, with each string prefixed by
// its length as a big-endian uint32 and each integer big-endian.
func (h Header) associatedData() ([]byte, error) { return h.appendAssociatedData(nil) }

// appendAssociatedData appends the encoding of associatedData to dst.
func (h Header) appendAssociatedData(dst []byte) ([]byte, error) {
	for _, s := range []string{h.Session, h.From, h.To} {
		if uint64(len(s)) > math.MaxUint32 {
			return nil, fmt.Errorf("envelope header field of %d bytes is too long", len(s))
		}
	}
	ad := slices.Grow(dst, 4*4+len(envelopeDomain)+len(h.Session)+8+4+len(h.From)+len(h.To))
	putString := func(s string) {
		ad = binary.BigEndian.AppendUint32(ad, uint32(len(s)))
		ad = append(ad, s...)
	}
	putString(envelopeDomain)
	putString(h.Session)
	ad = binary.BigEndian.AppendUint64(ad, h.Step)
	ad = binary.BigEndian.AppendUint32(ad, h.Iteration)
	putString(h.From)
	putString(h.To)
	return ad, nil
}

// BoundHeader is a Header with its associated data already encoded, for
// sealing or opening many envelopes of one header — a batch of one step and
// iteration — without encoding it again for each. The zero BoundHeader seals
// and opens nothing.
type BoundHeader struct {
	h  Header
	ad []byte
}

// Bind returns h bound: its associated data encoded.
func (h Header) Bind() (BoundHeader, error) {
	var b BoundHeader
	return b, b.Rebind(h)
}

// Rebind binds h in b's place, reusing b's storage when it is large enough,
// so that a role binding a header every step allocates nothing. Copies of b
// share that storage: after Rebind they hold the new header's associated
// data too. On error b is unchanged.
func (b *BoundHeader) Rebind(h Header) error {
	if b.ad != nil && h.Session == b.h.Session && h.From == b.h.From && h.To == b.h.To {
		// Only the step and iteration change, as from one step to the next:
		// they sit after the domain and the session.
		at := 4 + len(envelopeDomain) + 4 + len(h.Session)
		binary.BigEndian.PutUint64(b.ad[at:], h.Step)
		binary.BigEndian.PutUint32(b.ad[at+8:], h.Iteration)
		b.h = h
		return nil
	}
	ad, err := h.appendAssociatedData(b.ad[:0])
	if err != nil {
		return err
	}
	b.h, b.ad = h, ad
	return nil
}

// Header returns the header b was bound from.
func (b BoundHeader) Header() Header { return b.h }

// NewEnvelopeKey returns a fresh key read from rand (crypto/rand.Reader in
// real sessions).
func NewEnvelopeKey(rand io.Reader) (EnvelopeKey, error) {
	var k EnvelopeKey
	if _, err := io.ReadFull(rand, k[:]); err != nil {
		return EnvelopeKey{}, fmt.Errorf("generating envelope key: reading randomness: %w", err)
	}
	return k, nil
}

// Envelope seals and opens messages under one key with AES-256-GCM,
// creating the cipher once. It is safe for concurrent use.
//
// Nonces are random, so one key should seal at most 2³² messages, far beyond
// any session.
type Envelope struct {
	aead cipher.AEAD
}

// NewEnvelope prepares the cipher for key.
func NewEnvelope(key EnvelopeKey) (*Envelope, error) {
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, fmt.Errorf("envelope cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("envelope cipher: %w", err)
	}
	return &Envelope{aead: aead}, nil
}

// Seal encrypts and authenticates plaintext for header h. The output is a
// fresh 12-byte random nonce read from rand, followed by the GCM ciphertext
// and tag; it is EnvelopeOverhead bytes longer than plaintext.
func (e *Envelope) Seal(rand io.Reader, h Header, plaintext []byte) ([]byte, error) {
	b, err := h.Bind()
	if err != nil {
		return nil, fmt.Errorf("sealing envelope: %w", err)
	}
	return e.AppendSeal(make([]byte, 0, EnvelopeOverhead+len(plaintext)), rand, b, plaintext)
}

// AppendSeal is Seal for a bound header, appending the envelope to dst and
// returning the extended slice (when dst has the capacity, it allocates
// nothing). plaintext must not overlap dst's spare capacity. rand may be a
// buffered reader of crypto/rand: nonces need to be unpredictable and never
// repeat, not secret.
func (e *Envelope) AppendSeal(dst []byte, rand io.Reader, h BoundHeader, plaintext []byte) ([]byte, error) {
	if h.ad == nil {
		return nil, errors.New("sealing envelope: the header is not bound")
	}
	n := len(dst)
	out := slices.Grow(dst, EnvelopeOverhead+len(plaintext))[:n+EnvelopeNonceSize]
	nonce := out[n:]
	if _, err := io.ReadFull(rand, nonce); err != nil {
		return nil, fmt.Errorf("sealing envelope: reading nonce randomness: %w", err)
	}
	return e.aead.Seal(out, nonce, plaintext, h.ad), nil
}

// Open authenticates and decrypts an envelope sealed for header h. It fails
// with ErrEnvelopeTooShort if sealed cannot hold a nonce and tag, and with
// ErrEnvelopeAuth if the envelope was altered, sealed under another key, or
// sealed for a different header (a replayed, reordered or misrouted
// envelope: other session, step, iteration, sender or recipient).
func (e *Envelope) Open(h Header, sealed []byte) ([]byte, error) {
	if len(sealed) < EnvelopeOverhead {
		return nil, fmt.Errorf("opening envelope: %d bytes, need at least %d: %w", len(sealed), EnvelopeOverhead, ErrEnvelopeTooShort)
	}
	b, err := h.Bind()
	if err != nil {
		return nil, fmt.Errorf("opening envelope: %w", err)
	}
	return e.AppendOpen(nil, b, sealed)
}

// AppendOpen is Open for a bound header, appending the plaintext to dst and
// returning the extended slice (when dst has the capacity, it allocates
// nothing). dst's spare capacity must not overlap sealed.
func (e *Envelope) AppendOpen(dst []byte, h BoundHeader, sealed []byte) ([]byte, error) {
	if len(sealed) < EnvelopeOverhead {
		return nil, fmt.Errorf("opening envelope: %d bytes, need at least %d: %w", len(sealed), EnvelopeOverhead, ErrEnvelopeTooShort)
	}
	if h.ad == nil {
		return nil, errors.New("opening envelope: the header is not bound")
	}
	pt, err := e.aead.Open(dst, sealed[:EnvelopeNonceSize], sealed[EnvelopeNonceSize:], h.ad)
	if err != nil {
		return nil, fmt.Errorf("opening envelope for session %q step %d iteration %d from %q to %q: %w",
			h.h.Session, h.h.Step, h.h.Iteration, h.h.From, h.h.To, ErrEnvelopeAuth)
	}
	return pt, nil
}

// Seal encrypts plaintext under key for header h; see Envelope.Seal. Use an
// Envelope to seal many messages under one key.
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
