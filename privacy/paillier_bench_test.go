package privacy

import (
	crand "crypto/rand"
	"math/big"
	"math/rand/v2"
	"testing"
)

func benchKey(b *testing.B) *PrivateKey {
	b.Helper()
	return testKey(b, DefaultPaillierBits, 42)
}

// BenchmarkPaillierGenerateKey measures 2048-bit key generation from
// crypto/rand; its time varies widely with the luck of the prime search.
func BenchmarkPaillierGenerateKey(b *testing.B) {
	for b.Loop() {
		if _, err := GenerateKey(crand.Reader, DefaultPaillierBits); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPaillierEncrypt(b *testing.B) {
	sk := benchKey(b)
	rng := rand.NewChaCha8([32]byte{1})
	m := big.NewInt(123456789)
	for b.Loop() {
		if _, err := sk.Encrypt(rng, m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPaillierEncryptPrecomputed measures an encryption whose
// randomizer r^N is ready, as a warm Precomputer's are: EncryptWith (which
// checks the randomizer, mostly a gcd) and EncryptFast (which takes it from
// the pool and trusts it). The randomizers are recycled here, which a real
// caller must never do.
func BenchmarkPaillierEncryptPrecomputed(b *testing.B) {
	sk := benchKey(b)
	rng := rand.NewChaCha8([32]byte{1})
	m := big.NewInt(123456789)
	rns := make([]*big.Int, 0, 16)
	for range cap(rns) {
		rn, err := sk.RandomRN(rng)
		if err != nil {
			b.Fatal(err)
		}
		rns = append(rns, rn)
	}
	b.Run("EncryptWith", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := sk.EncryptWith(m, rns[i%len(rns)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("EncryptFast", func(b *testing.B) {
		// A Precomputer without workers whose pool the loop refills.
		pre := &Precomputer{pk: &sk.PublicKey, pool: make(chan *big.Int, 1), done: make(chan struct{})}
		ctx := b.Context()
		i := 0
		for b.Loop() {
			pre.pool <- rns[i%len(rns)]
			if _, err := pre.EncryptFast(ctx, m); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

func BenchmarkPaillierDecrypt(b *testing.B) {
	sk := benchKey(b)
	c, err := sk.Encrypt(rand.NewChaCha8([32]byte{1}), big.NewInt(123456789))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := sk.Decrypt(c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPaillierDecryptTextbook(b *testing.B) {
	sk := benchKey(b)
	tb := newTextbook(sk)
	c, err := sk.Encrypt(rand.NewChaCha8([32]byte{1}), big.NewInt(123456789))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		tb.decrypt(c)
	}
}

func BenchmarkPaillierAdd(b *testing.B) {
	sk := benchKey(b)
	rng := rand.NewChaCha8([32]byte{1})
	x, _ := sk.Encrypt(rng, big.NewInt(1))
	y, _ := sk.Encrypt(rng, big.NewInt(2))
	for b.Loop() {
		sk.Add(x, y)
	}
}
