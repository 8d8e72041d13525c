package privacy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
)

// Paillier key sizes, in bits of the modulus N.
const (
	// DefaultPaillierBits is the modulus size of real sessions; GenerateKey
	// uses it when asked for 0 bits.
	DefaultPaillierBits = 2048
	// MinPaillierBits is the smallest modulus GenerateKey and
	// UnmarshalPublicKey accept. Moduli below DefaultPaillierBits are for
	// tests and simulations only: they are not secure.
	MinPaillierBits = 512
	// MaxPaillierBits is the largest modulus GenerateKey and
	// UnmarshalPublicKey accept; it bounds the work a peer's key can cause.
	MaxPaillierBits = 8192
)

// ErrInvalidCiphertext reports a Paillier ciphertext that is not an element
// of Z*_{N²} for the key at hand, or that has the wrong encoded width.
var ErrInvalidCiphertext = errors.New("invalid paillier ciphertext")

// ErrPlaintextRange reports a Paillier plaintext outside [0, N).
var ErrPlaintextRange = errors.New("paillier plaintext out of range")

// maxSampleTries bounds rejection sampling. Each try succeeds with
// probability above 1/2 for the moduli used here, so failing this many times
// in a row means the randomness source is broken (for example, all zeros).
const maxSampleTries = 128

// PublicKey is a Paillier public key with generator g = N+1 (implicit).
//
// Plaintexts are integers in [0, N); Encrypt and EncryptWith reject negative
// inputs and inputs ≥ N rather than reducing them. Homomorphic addition is
// addition modulo N: a sum that reaches N wraps around, so callers must
// bound their totals (or encode signed values themselves) below N.
//
// A PublicKey comes from GenerateKey or UnmarshalPublicKey; its methods
// assume N and NSquared are set and consistent.
type PublicKey struct {
	N        *big.Int // modulus, the product of two distinct primes
	NSquared *big.Int // N², the ciphertext modulus
}

// PrivateKey is a Paillier private key. It decrypts with the Chinese
// remainder theorem, working modulo p² and q² separately, which is about
// three to four times faster than the textbook λ/μ decryption modulo N².
type PrivateKey struct {
	PublicKey

	p, q       *big.Int // the prime factors of N, p ≠ q
	pSq, qSq   *big.Int // p², q²
	pMin, qMin *big.Int // p−1, q−1: the decryption exponents
	hp, hq     *big.Int // L_p(g^(p−1) mod p²)⁻¹ mod p, and the same for q
	qInvP      *big.Int // q⁻¹ mod p, for recombination
}

// Ciphertext is a Paillier ciphertext, an element of Z*_{N²}.
type Ciphertext struct {
	C *big.Int
}

// GenerateKey returns a fresh Paillier key whose modulus N has exactly bits
// bits (DefaultPaillierBits if bits is 0), reading all its randomness from
// rand (crypto/rand.Reader in real sessions). bits must be even and in
// [MinPaillierBits, MaxPaillierBits]. The primes p and q are distinct, each
// of exactly bits/2 bits, far apart, and satisfy gcd(pq, (p−1)(q−1)) = 1.
//
// Primes are drawn here rather than with crypto/rand.Prime, which since Go
// 1.26 ignores its reader; this keeps seeded test keys reproducible.
func GenerateKey(rand io.Reader, bits int) (*PrivateKey, error) {
	if bits == 0 {
		bits = DefaultPaillierBits
	}
	if bits < MinPaillierBits || bits > MaxPaillierBits || bits%2 != 0 {
		return nil, fmt.Errorf("paillier key generation: %d-bit modulus requested, want an even size in [%d, %d]",
			bits, MinPaillierBits, MaxPaillierBits)
	}
	half := bits / 2
	// |p − q| must exceed 2^(half−100), or Fermat's method factors N.
	minGap := new(big.Int).Lsh(big.NewInt(1), uint(half-100))
	for range maxSampleTries {
		p, err := randomPrime(rand, half)
		if err != nil {
			return nil, fmt.Errorf("paillier key generation: %w", err)
		}
		q, err := randomPrime(rand, half)
		if err != nil {
			return nil, fmt.Errorf("paillier key generation: %w", err)
		}
		if new(big.Int).Abs(new(big.Int).Sub(p, q)).Cmp(minGap) <= 0 {
			continue
		}
		sk, err := newPrivateKey(p, q)
		if err != nil {
			continue // gcd(pq, (p−1)(q−1)) ≠ 1: draw again
		}
		if sk.N.BitLen() != bits {
			return nil, fmt.Errorf("paillier key generation: modulus has %d bits, want %d", sk.N.BitLen(), bits)
		}
		return sk, nil
	}
	return nil, fmt.Errorf("paillier key generation: no suitable primes after %d attempts; is the randomness source broken?", maxSampleTries)
}

// randomPrime returns a prime of exactly bits bits with its two top bits
// set, so that the product of two such primes has exactly 2·bits bits.
func randomPrime(rand io.Reader, bits int) (*big.Int, error) {
	buf := make([]byte, (bits+7)/8)
	extra := uint(len(buf)*8 - bits)
	p := new(big.Int)
	// A random odd bits-bit number is prime with probability about
	// 2/(bits·ln 2); this bound fails with negligible probability for any
	// working source.
	limit := 100 * bits
	for range limit {
		if _, err := io.ReadFull(rand, buf); err != nil {
			return nil, fmt.Errorf("reading randomness for a prime: %w", err)
		}
		buf[0] &= 0xff >> extra
		if extra == 7 { // the top bit is the lowest of buf[0]
			buf[0] |= 0x01
			buf[1] |= 0x80
		} else {
			buf[0] |= 0xc0 >> extra
		}
		buf[len(buf)-1] |= 1
		p.SetBytes(buf)
		if p.ProbablyPrime(20) {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no %d-bit prime found in %d candidates; is the randomness source broken?", bits, limit)
}

// newPrivateKey builds the key and its CRT precomputations from two distinct
// primes.
func newPrivateKey(p, q *big.Int) (*PrivateKey, error) {
	if p.Cmp(q) == 0 {
		return nil, errors.New("paillier primes are equal")
	}
	one := big.NewInt(1)
	n := new(big.Int).Mul(p, q)
	pMin := new(big.Int).Sub(p, one)
	qMin := new(big.Int).Sub(q, one)
	phi := new(big.Int).Mul(pMin, qMin)
	if new(big.Int).GCD(nil, nil, n, phi).Cmp(one) != 0 {
		return nil, errors.New("paillier primes have gcd(pq, (p-1)(q-1)) != 1")
	}
	sk := &PrivateKey{
		PublicKey: PublicKey{N: n, NSquared: new(big.Int).Mul(n, n)},
		p:         new(big.Int).Set(p),
		q:         new(big.Int).Set(q),
		pSq:       new(big.Int).Mul(p, p),
		qSq:       new(big.Int).Mul(q, q),
		pMin:      pMin,
		qMin:      qMin,
	}
	g := new(big.Int).Add(n, one)
	var ok bool
	if sk.hp, ok = crtH(g, p, sk.pSq, pMin); !ok {
		return nil, errors.New("paillier key has no CRT constant modulo p")
	}
	if sk.hq, ok = crtH(g, q, sk.qSq, qMin); !ok {
		return nil, errors.New("paillier key has no CRT constant modulo q")
	}
	if sk.qInvP = new(big.Int).ModInverse(q, p); sk.qInvP == nil {
		return nil, errors.New("paillier primes are not coprime")
	}
	return sk, nil
}

// crtH returns L_p(g^(p−1) mod p²)⁻¹ mod p, where L_p(x) = (x−1)/p.
func crtH(g, p, pSq, pMin *big.Int) (*big.Int, bool) {
	x := new(big.Int).Exp(g, pMin, pSq)
	l := lFunc(x, p)
	h := new(big.Int).ModInverse(l, p)
	return h, h != nil
}

// lFunc returns L_d(x) = (x − 1) / d.
func lFunc(x, d *big.Int) *big.Int {
	l := new(big.Int).Sub(x, big.NewInt(1))
	return l.Quo(l, d)
}

// Public returns the public half of the key.
func (sk *PrivateKey) Public() *PublicKey {
	return &sk.PublicKey
}

// ciphertextWidth is the byte length of N², the width of an encoded
// ciphertext.
func (pk *PublicKey) ciphertextWidth() int {
	return (pk.NSquared.BitLen() + 7) / 8
}

// CiphertextSize returns the byte width of an encoded ciphertext under pk:
// the byte length of N².
func (pk *PublicKey) CiphertextSize() int {
	return pk.ciphertextWidth()
}

// checkPlaintext reports whether m is in [0, N).
func (pk *PublicKey) checkPlaintext(m *big.Int) error {
	if m == nil {
		return fmt.Errorf("paillier encryption: no plaintext: %w", ErrPlaintextRange)
	}
	if m.Sign() < 0 || m.Cmp(pk.N) >= 0 {
		return fmt.Errorf("paillier encryption: plaintext must lie in [0, N) for a %d-bit N (negative values and values >= N are rejected, not reduced): %w",
			pk.N.BitLen(), ErrPlaintextRange)
	}
	return nil
}

// Encrypt encrypts m, which must lie in [0, N), as c = (1 + mN)·r^N mod N²
// with r uniform in Z*_N read from rand. Negative m and m ≥ N are rejected
// with ErrPlaintextRange. It costs one exponentiation modulo N² (about
// 15 ms at 2048 bits); Precomputer moves that cost off the critical path.
func (pk *PublicKey) Encrypt(rand io.Reader, m *big.Int) (*Ciphertext, error) {
	if err := pk.checkPlaintext(m); err != nil {
		return nil, err
	}
	rn, err := pk.randomRN(rand)
	if err != nil {
		return nil, fmt.Errorf("paillier encryption: %w", err)
	}
	return pk.encryptWith(m, rn), nil
}

// EncryptWith encrypts m, which must lie in [0, N), with a precomputed
// rn = r^N mod N² for a fresh r uniform in Z*_N (from Precomputer or
// RandomRN). Each rn must be used for one encryption only: reusing it
// reveals the difference of the two plaintexts. rn must lie in (0, N²) and
// be coprime to N; a value that is not an N-th power (not r^N for some r)
// yields a ciphertext that does not decrypt to m, which cannot be checked
// here.
func (pk *PublicKey) EncryptWith(m *big.Int, rn *big.Int) (*Ciphertext, error) {
	if err := pk.checkPlaintext(m); err != nil {
		return nil, err
	}
	if rn == nil || rn.Sign() <= 0 || rn.Cmp(pk.NSquared) >= 0 {
		return nil, errors.New("paillier encryption: randomizer r^N must lie in (0, N^2)")
	}
	if !coprime(rn, pk.N) {
		return nil, errors.New("paillier encryption: randomizer r^N shares a factor with N")
	}
	return pk.encryptWith(m, rn), nil
}

// encryptWith computes (1 + mN)·rn mod N² as rn + N·(m·rn mod N) mod N²,
// since mN·rn ≡ N·(m·rn mod N) (mod N²).
func (pk *PublicKey) encryptWith(m, rn *big.Int) *Ciphertext {
	t := new(big.Int).Mul(m, rn)
	t.Mod(t, pk.N)
	t.Mul(t, pk.N)
	t.Add(t, rn)
	if t.Cmp(pk.NSquared) >= 0 {
		t.Sub(t, pk.NSquared)
	}
	return &Ciphertext{C: t}
}

// RandomRN returns r^N mod N² for a fresh r uniform in Z*_N read from rand:
// the randomizer that EncryptWith consumes.
func (pk *PublicKey) RandomRN(rand io.Reader) (*big.Int, error) {
	rn, err := pk.randomRN(rand)
	if err != nil {
		return nil, fmt.Errorf("paillier randomizer: %w", err)
	}
	return rn, nil
}

func (pk *PublicKey) randomRN(rand io.Reader) (*big.Int, error) {
	r, err := randomUnit(rand, pk.N)
	if err != nil {
		return nil, err
	}
	return r.Exp(r, pk.N, pk.NSquared), nil
}

// randomUnit returns r uniform in Z*_n (1 ≤ r < n, gcd(r, n) = 1) by
// rejection sampling.
func randomUnit(rand io.Reader, n *big.Int) (*big.Int, error) {
	bits := n.BitLen()
	buf := make([]byte, (bits+7)/8)
	extra := uint(len(buf)*8 - bits)
	r := new(big.Int)
	for range maxSampleTries {
		if _, err := io.ReadFull(rand, buf); err != nil {
			return nil, fmt.Errorf("reading randomness: %w", err)
		}
		buf[0] &= 0xff >> extra
		r.SetBytes(buf)
		if r.Sign() > 0 && r.Cmp(n) < 0 && coprime(r, n) {
			return r, nil
		}
	}
	return nil, fmt.Errorf("no random unit modulo N after %d draws; is the randomness source broken?", maxSampleTries)
}

// coprime reports whether gcd(a, b) = 1.
func coprime(a, b *big.Int) bool {
	return new(big.Int).GCD(nil, nil, a, b).Cmp(big.NewInt(1)) == 0
}

// Add returns the homomorphic sum a·b mod N², an encryption of
// (m_a + m_b) mod N. a and b must be valid ciphertexts under pk (from
// Encrypt, Add or ParseCiphertext); their product is then valid too.
func (pk *PublicKey) Add(a, b *Ciphertext) *Ciphertext {
	c := new(big.Int).Mul(a.C, b.C)
	return &Ciphertext{C: c.Mod(c, pk.NSquared)}
}

// Validate checks that c is an element of Z*_{N²}: 0 < c < N² and
// gcd(c, N) = 1. Call it on every ciphertext from the network (it is part of
// ParseCiphertext and Decrypt); a failure wraps ErrInvalidCiphertext.
func (pk *PublicKey) Validate(c *Ciphertext) error {
	if c == nil || c.C == nil {
		return fmt.Errorf("paillier ciphertext is missing: %w", ErrInvalidCiphertext)
	}
	if c.C.Sign() <= 0 {
		return fmt.Errorf("paillier ciphertext is not positive: %w", ErrInvalidCiphertext)
	}
	if c.C.Cmp(pk.NSquared) >= 0 {
		return fmt.Errorf("paillier ciphertext is not below N^2 (%d bits, modulus %d bits): %w",
			c.C.BitLen(), pk.NSquared.BitLen(), ErrInvalidCiphertext)
	}
	if !coprime(c.C, pk.N) {
		return fmt.Errorf("paillier ciphertext shares a factor with N: %w", ErrInvalidCiphertext)
	}
	return nil
}

// Decrypt validates c and returns its plaintext in [0, N), computed with the
// Chinese remainder theorem: m_p = L_p(c^(p−1) mod p²)·h_p mod p, likewise
// m_q, and m is the unique value in [0, N) congruent to both.
func (sk *PrivateKey) Decrypt(c *Ciphertext) (*big.Int, error) {
	if err := sk.Validate(c); err != nil {
		return nil, fmt.Errorf("paillier decryption: %w", err)
	}
	mp := decryptPart(c.C, sk.p, sk.pSq, sk.pMin, sk.hp)
	mq := decryptPart(c.C, sk.q, sk.qSq, sk.qMin, sk.hq)
	// m = mq + q·((mp − mq)·q⁻¹ mod p)
	m := mp.Sub(mp, mq)
	m.Mul(m, sk.qInvP)
	m.Mod(m, sk.p)
	m.Mul(m, sk.q)
	return m.Add(m, mq), nil
}

// decryptPart returns L_p(c^(p−1) mod p²)·h mod p.
func decryptPart(c, p, pSq, pMin, h *big.Int) *big.Int {
	x := new(big.Int).Mod(c, pSq)
	x.Exp(x, pMin, pSq)
	m := lFunc(x, p)
	m.Mul(m, h)
	return m.Mod(m, p)
}

// MarshalBinary encodes the public key as a 4-byte big-endian length
// followed by N, big-endian, without leading zeros.
func (pk *PublicKey) MarshalBinary() ([]byte, error) {
	if pk == nil || pk.N == nil || pk.N.Sign() <= 0 {
		return nil, errors.New("encoding paillier public key: no modulus")
	}
	n := pk.N.Bytes()
	out := make([]byte, 4+len(n))
	binary.BigEndian.PutUint32(out, uint32(len(n)))
	copy(out[4:], n)
	return out, nil
}

// UnmarshalPublicKey decodes a public key written by MarshalBinary. It
// rejects trailing bytes, a length that disagrees with the data, leading
// zero bytes, an even N, and an N of fewer than MinPaillierBits or more than
// MaxPaillierBits bits. It cannot check that N is a product of two primes.
func UnmarshalPublicKey(b []byte) (*PublicKey, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("decoding paillier public key: %d bytes, too short for the length prefix", len(b))
	}
	l := binary.BigEndian.Uint32(b)
	if l > MaxPaillierBits/8 {
		return nil, fmt.Errorf("decoding paillier public key: modulus of %d bytes exceeds the %d-bit maximum", l, MaxPaillierBits)
	}
	if uint64(len(b)-4) != uint64(l) {
		return nil, fmt.Errorf("decoding paillier public key: length prefix says %d bytes, %d follow", l, len(b)-4)
	}
	raw := b[4:]
	if len(raw) == 0 || raw[0] == 0 {
		return nil, errors.New("decoding paillier public key: modulus is empty or has leading zero bytes")
	}
	n := new(big.Int).SetBytes(raw)
	if n.BitLen() < MinPaillierBits || n.BitLen() > MaxPaillierBits {
		return nil, fmt.Errorf("decoding paillier public key: %d-bit modulus, want %d to %d bits",
			n.BitLen(), MinPaillierBits, MaxPaillierBits)
	}
	if n.Bit(0) == 0 {
		return nil, errors.New("decoding paillier public key: modulus is even")
	}
	return &PublicKey{N: n, NSquared: new(big.Int).Mul(n, n)}, nil
}

// Bytes encodes c big-endian at the fixed width of N² in bytes
// (CiphertextSize), so that encodings reveal nothing through their length.
// c must be valid under pk (as from Encrypt, Add or ParseCiphertext).
func (c *Ciphertext) Bytes(pk *PublicKey) []byte {
	return c.C.FillBytes(make([]byte, pk.ciphertextWidth()))
}

// ParseCiphertext decodes a ciphertext written by Bytes: it requires exactly
// CiphertextSize bytes, then Validate. Failures wrap ErrInvalidCiphertext.
func (pk *PublicKey) ParseCiphertext(b []byte) (*Ciphertext, error) {
	if w := pk.ciphertextWidth(); len(b) != w {
		return nil, fmt.Errorf("decoding paillier ciphertext: %d bytes, want exactly %d: %w", len(b), w, ErrInvalidCiphertext)
	}
	c := &Ciphertext{C: new(big.Int).SetBytes(b)}
	if err := pk.Validate(c); err != nil {
		return nil, fmt.Errorf("decoding paillier ciphertext: %w", err)
	}
	return c, nil
}
