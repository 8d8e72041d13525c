package privacy

import (
	"bytes"
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"
)

// testKey returns a deterministic key of the given size for tests.
func testKey(t testing.TB, bits int, seed byte) *PrivateKey {
	t.Helper()
	sk, err := GenerateKey(rand.NewChaCha8([32]byte{seed}), bits)
	if err != nil {
		t.Fatalf("GenerateKey(%d): %v", bits, err)
	}
	return sk
}

// textbookDecrypt is Paillier's original decryption, for comparison:
// m = L(c^λ mod N²)·μ mod N with λ = lcm(p−1, q−1) and
// μ = L(g^λ mod N²)⁻¹ mod N.
type textbook struct {
	n, nSq, lambda, mu *big.Int
}

func newTextbook(sk *PrivateKey) *textbook {
	one := big.NewInt(1)
	pm := new(big.Int).Sub(sk.p, one)
	qm := new(big.Int).Sub(sk.q, one)
	gcd := new(big.Int).GCD(nil, nil, pm, qm)
	lambda := new(big.Int).Mul(pm, qm)
	lambda.Quo(lambda, gcd)
	g := new(big.Int).Add(sk.N, one)
	x := new(big.Int).Exp(g, lambda, sk.NSquared)
	mu := new(big.Int).ModInverse(lFunc(x, sk.N), sk.N)
	return &textbook{n: sk.N, nSq: sk.NSquared, lambda: lambda, mu: mu}
}

func (tb *textbook) decrypt(c *Ciphertext) *big.Int {
	x := new(big.Int).Exp(c.C, tb.lambda, tb.nSq)
	m := lFunc(x, tb.n)
	m.Mul(m, tb.mu)
	return m.Mod(m, tb.n)
}

func TestGenerateKey(t *testing.T) {
	for _, bits := range []int{512, 1024} {
		sk := testKey(t, bits, 1)
		if sk.N.BitLen() != bits {
			t.Errorf("%d-bit key: N has %d bits", bits, sk.N.BitLen())
		}
		if sk.p.BitLen() != bits/2 || sk.q.BitLen() != bits/2 || sk.p.Cmp(sk.q) == 0 {
			t.Errorf("%d-bit key: primes of %d and %d bits", bits, sk.p.BitLen(), sk.q.BitLen())
		}
		if !sk.p.ProbablyPrime(20) || !sk.q.ProbablyPrime(20) {
			t.Errorf("%d-bit key: factors are not prime", bits)
		}
		if new(big.Int).Mul(sk.p, sk.q).Cmp(sk.N) != 0 || new(big.Int).Mul(sk.N, sk.N).Cmp(sk.NSquared) != 0 {
			t.Errorf("%d-bit key: N or N² inconsistent", bits)
		}
	}
	// Seeded generation is reproducible.
	if a, b := testKey(t, 512, 9), testKey(t, 512, 9); a.N.Cmp(b.N) != 0 {
		t.Error("same seed, different keys")
	}
	for _, bits := range []int{-1, 256, 510, 513, 8194} {
		if _, err := GenerateKey(rand.NewChaCha8([32]byte{}), bits); err == nil {
			t.Errorf("GenerateKey accepted %d bits", bits)
		}
	}
	if _, err := GenerateKey(bytes.NewReader(nil), 512); err == nil {
		t.Error("GenerateKey succeeded with an empty randomness source")
	}
	if _, err := GenerateKey(zeroReader{}, 512); err == nil {
		t.Error("GenerateKey succeeded with an all-zero randomness source")
	}
}

type zeroReader struct{}

func (zeroReader) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

func TestPaillierRoundTrip(t *testing.T) {
	sk := testKey(t, 512, 2)
	pk := &sk.PublicKey
	rng := rand.NewChaCha8([32]byte{2})
	nMinus1 := new(big.Int).Sub(pk.N, big.NewInt(1))
	tests := []struct {
		name string
		m    *big.Int
	}{
		{"zero", big.NewInt(0)},
		{"one", big.NewInt(1)},
		{"small", big.NewInt(123456789)},
		{"2^64", new(big.Int).Lsh(big.NewInt(1), 64)},
		{"N-1", nMinus1},
		{"half N", new(big.Int).Rsh(pk.N, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := pk.Encrypt(rng, tt.m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := sk.Decrypt(c)
			if err != nil {
				t.Fatal(err)
			}
			if got.Cmp(tt.m) != 0 {
				t.Errorf("Decrypt(Encrypt(%v)) = %v", tt.m, got)
			}
			// Through the wire format too.
			c2, err := pk.ParseCiphertext(c.Bytes(pk))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := sk.Decrypt(c2); got.Cmp(tt.m) != 0 {
				t.Errorf("after Bytes/ParseCiphertext: %v, want %v", got, tt.m)
			}
			// Encryption is randomized.
			c3, err := pk.Encrypt(rng, tt.m)
			if err != nil {
				t.Fatal(err)
			}
			if c3.C.Cmp(c.C) == 0 {
				t.Error("two encryptions of the same plaintext are equal")
			}
		})
	}
}

func TestPaillierHomomorphicSum(t *testing.T) {
	sk := testKey(t, 1024, 3)
	pk := &sk.PublicKey
	rng := rand.NewChaCha8([32]byte{3})
	vals := rand.New(rand.NewPCG(3, 3))
	const n = 200
	want := new(big.Int)
	var sum *Ciphertext
	for i := range n {
		m := new(big.Int).SetUint64(vals.Uint64())
		want.Add(want, m)
		c, err := pk.Encrypt(rng, m)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			sum = c
		} else {
			sum = pk.Add(sum, c)
		}
	}
	if err := pk.Validate(sum); err != nil {
		t.Fatalf("sum is not a valid ciphertext: %v", err)
	}
	got, err := sk.Decrypt(sum)
	if err != nil {
		t.Fatal(err)
	}
	if got.Cmp(want) != 0 {
		t.Errorf("sum of %d decrypts to %v, want %v", n, got, want)
	}

	// Sums wrap modulo N: (N−1) + 2 = 1.
	a, _ := pk.Encrypt(rng, new(big.Int).Sub(pk.N, big.NewInt(1)))
	b, _ := pk.Encrypt(rng, big.NewInt(2))
	if got, _ := sk.Decrypt(pk.Add(a, b)); got.Cmp(big.NewInt(1)) != 0 {
		t.Errorf("(N-1)+2 decrypts to %v, want 1", got)
	}
}

func TestPaillierEncryptRejectsOutOfRange(t *testing.T) {
	sk := testKey(t, 512, 4)
	pk := &sk.PublicKey
	tests := []struct {
		name string
		m    *big.Int
	}{
		{"nil", nil},
		{"-1", big.NewInt(-1)},
		{"-N", new(big.Int).Neg(pk.N)},
		{"N", new(big.Int).Set(pk.N)},
		{"N+1", new(big.Int).Add(pk.N, big.NewInt(1))},
		{"N²", new(big.Int).Set(pk.NSquared)},
	}
	pre := NewPrecomputer(t.Context(), pk, rand.NewChaCha8([32]byte{4}), 1, 1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := pk.Encrypt(rand.NewChaCha8([32]byte{}), tt.m); !errors.Is(err, ErrPlaintextRange) {
				t.Errorf("Encrypt: err = %v, want ErrPlaintextRange", err)
			}
			if _, err := pk.EncryptWith(tt.m, big.NewInt(1)); !errors.Is(err, ErrPlaintextRange) {
				t.Errorf("EncryptWith: err = %v, want ErrPlaintextRange", err)
			}
			if _, err := pre.EncryptFast(t.Context(), tt.m); !errors.Is(err, ErrPlaintextRange) {
				t.Errorf("EncryptFast: err = %v, want ErrPlaintextRange", err)
			}
		})
	}
}

func TestPaillierEncryptWithRejectsBadRandomizer(t *testing.T) {
	sk := testKey(t, 512, 4)
	pk := &sk.PublicKey
	for _, rn := range []*big.Int{nil, big.NewInt(0), big.NewInt(-1), new(big.Int).Set(pk.NSquared), new(big.Int).Set(sk.p)} {
		if _, err := pk.EncryptWith(big.NewInt(1), rn); err == nil {
			t.Errorf("EncryptWith accepted randomizer %v", rn)
		}
	}
}

func TestPaillierValidate(t *testing.T) {
	sk := testKey(t, 512, 5)
	pk := &sk.PublicKey
	good, err := pk.Encrypt(rand.NewChaCha8([32]byte{5}), big.NewInt(42))
	if err != nil {
		t.Fatal(err)
	}
	big7 := big.NewInt(7)
	tests := []struct {
		name string
		c    *Ciphertext
	}{
		{"nil", nil},
		{"nil value", &Ciphertext{}},
		{"zero", &Ciphertext{C: big.NewInt(0)}},
		{"negative", &Ciphertext{C: big.NewInt(-5)}},
		{"N²", &Ciphertext{C: new(big.Int).Set(pk.NSquared)}},
		{"N²+1", &Ciphertext{C: new(big.Int).Add(pk.NSquared, big.NewInt(1))}},
		{"good+N²", &Ciphertext{C: new(big.Int).Add(good.C, pk.NSquared)}},
		{"N", &Ciphertext{C: new(big.Int).Set(pk.N)}},
		{"p", &Ciphertext{C: new(big.Int).Set(sk.p)}},
		{"7p", &Ciphertext{C: new(big.Int).Mul(big7, sk.p)}},
		{"q·(N+1)", &Ciphertext{C: new(big.Int).Mul(sk.q, new(big.Int).Add(pk.N, big.NewInt(1)))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := pk.Validate(tt.c); !errors.Is(err, ErrInvalidCiphertext) {
				t.Errorf("Validate: err = %v, want ErrInvalidCiphertext", err)
			}
			if _, err := sk.Decrypt(tt.c); !errors.Is(err, ErrInvalidCiphertext) {
				t.Errorf("Decrypt: err = %v, want ErrInvalidCiphertext", err)
			}
			// The fixed-width encoding of an in-range bad value is rejected by
			// ParseCiphertext too.
			if tt.c != nil && tt.c.C != nil && tt.c.C.Sign() >= 0 && tt.c.C.BitLen() <= 8*pk.CiphertextSize() {
				b := tt.c.C.FillBytes(make([]byte, pk.CiphertextSize()))
				if _, err := pk.ParseCiphertext(b); !errors.Is(err, ErrInvalidCiphertext) {
					t.Errorf("ParseCiphertext: err = %v, want ErrInvalidCiphertext", err)
				}
			}
		})
	}
	if err := pk.Validate(good); err != nil {
		t.Errorf("Validate rejected a fresh ciphertext: %v", err)
	}
	if err := pk.Validate(&Ciphertext{C: big.NewInt(1)}); err != nil {
		t.Errorf("Validate rejected 1 (an encryption of 0 with r = 1): %v", err)
	}
}

func TestParseCiphertextWidth(t *testing.T) {
	sk := testKey(t, 512, 6)
	pk := &sk.PublicKey
	c, err := pk.Encrypt(rand.NewChaCha8([32]byte{6}), big.NewInt(6))
	if err != nil {
		t.Fatal(err)
	}
	b := c.Bytes(pk)
	if len(b) != pk.CiphertextSize() || len(b) != (pk.NSquared.BitLen()+7)/8 {
		t.Fatalf("Bytes has %d bytes, want %d", len(b), pk.CiphertextSize())
	}
	// A small value still encodes at full width.
	one := (&Ciphertext{C: big.NewInt(1)}).Bytes(pk)
	if len(one) != len(b) || one[len(one)-1] != 1 {
		t.Errorf("Bytes(1) = %x", one)
	}
	tests := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"one short", b[1:]},
		{"one long", append([]byte{0}, b...)},
		{"trailing byte", append(append([]byte{}, b...), 0)},
		{"all ones", bytes.Repeat([]byte{0xff}, len(b))},
		{"all zeros", make([]byte, len(b))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := pk.ParseCiphertext(tt.b); !errors.Is(err, ErrInvalidCiphertext) {
				t.Errorf("err = %v, want ErrInvalidCiphertext", err)
			}
		})
	}
}

func TestCRTDecryptMatchesTextbook(t *testing.T) {
	for _, bits := range []int{512, 1024} {
		sk := testKey(t, bits, 7)
		pk := &sk.PublicKey
		tb := newTextbook(sk)
		rng := rand.NewChaCha8([32]byte{7})
		for i := range 20 {
			var c *Ciphertext
			if i%2 == 0 {
				m, err := randomUnit(rng, pk.N) // any value in [1, N)
				if err != nil {
					t.Fatal(err)
				}
				if c, err = pk.Encrypt(rng, m); err != nil {
					t.Fatal(err)
				}
			} else {
				// An arbitrary element of Z*_{N²} also decrypts identically.
				u, err := randomUnit(rng, pk.NSquared)
				if err != nil {
					t.Fatal(err)
				}
				c = &Ciphertext{C: u}
			}
			got, err := sk.Decrypt(c)
			if err != nil {
				t.Fatal(err)
			}
			if want := tb.decrypt(c); got.Cmp(want) != 0 {
				t.Errorf("%d-bit key: CRT decryption %v, textbook %v", bits, got, want)
			}
		}
	}
}

func TestPublicKeyMarshal(t *testing.T) {
	sk := testKey(t, 512, 8)
	b, err := sk.PublicKey.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	pk, err := UnmarshalPublicKey(b)
	if err != nil {
		t.Fatal(err)
	}
	if pk.N.Cmp(sk.N) != 0 || pk.NSquared.Cmp(sk.NSquared) != 0 {
		t.Fatal("public key changed in a round trip")
	}
	// A ciphertext made with the decoded key decrypts with the original.
	c, err := pk.Encrypt(rand.NewChaCha8([32]byte{8}), big.NewInt(99))
	if err != nil {
		t.Fatal(err)
	}
	if m, err := sk.Decrypt(c); err != nil || m.Int64() != 99 {
		t.Errorf("Decrypt = %v, %v; want 99", m, err)
	}

	encode := func(n *big.Int) []byte {
		raw := n.Bytes()
		return append([]byte{0, 0, byte(len(raw) >> 8), byte(len(raw))}, raw...)
	}
	small := new(big.Int).Lsh(big.NewInt(1), 510)
	small.Add(small, big.NewInt(1))
	huge := new(big.Int).Lsh(big.NewInt(1), 8192)
	huge.Add(huge, big.NewInt(1))
	tests := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"short prefix", []byte{0, 0, 1}},
		{"zero length", []byte{0, 0, 0, 0}},
		{"truncated", b[:len(b)-1]},
		{"trailing", append(append([]byte{}, b...), 1)},
		{"leading zero", append([]byte{0, 0, byte((len(b) - 3) >> 8), byte(len(b) - 3), 0}, b[4:]...)},
		{"huge length", []byte{0xff, 0xff, 0xff, 0xff, 1}},
		{"even", encode(new(big.Int).Lsh(sk.N, 1))},
		{"511 bits", encode(small)},
		{"8193 bits", encode(huge)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := UnmarshalPublicKey(tt.b); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func FuzzParseCiphertext(f *testing.F) {
	sk := testKey(f, 512, 14)
	pk := &sk.PublicKey
	c, err := pk.Encrypt(rand.NewChaCha8([32]byte{14}), big.NewInt(14))
	if err != nil {
		f.Fatal(err)
	}
	w := pk.CiphertextSize()
	f.Add(c.Bytes(pk))
	f.Add([]byte{})
	f.Add(make([]byte, w))
	f.Add(bytes.Repeat([]byte{0xff}, w))
	f.Add(sk.p.FillBytes(make([]byte, w)))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := pk.ParseCiphertext(b)
		if err != nil {
			return
		}
		if !bytes.Equal(c.Bytes(pk), b) {
			t.Errorf("re-encoding differs")
		}
		if _, err := sk.Decrypt(c); err != nil {
			t.Errorf("Decrypt of a parsed ciphertext: %v", err)
		}
	})
}

func FuzzUnmarshalPublicKey(f *testing.F) {
	sk := testKey(f, 512, 15)
	b, _ := sk.PublicKey.MarshalBinary()
	f.Add(b)
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 1, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		pk, err := UnmarshalPublicKey(b)
		if err != nil {
			return
		}
		again, err := pk.MarshalBinary()
		if err != nil || !bytes.Equal(again, b) {
			t.Errorf("re-encoding differs: %x, %v", again, err)
		}
	})
}

// Benchmarks use a 2048-bit key, generated once per benchmark (b.Loop runs
// the setup once).
