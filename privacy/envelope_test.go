package privacy

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
)

func testEnvelopeKey(t testing.TB, seed byte) EnvelopeKey {
	t.Helper()
	k, err := NewEnvelopeKey(rand.NewChaCha8([32]byte{seed}))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var testHeader = Header{Session: "sess-1", Step: 3, Iteration: 7, From: "owner/2", To: "comp"}

func TestEnvelopeRoundTrip(t *testing.T) {
	key := testEnvelopeKey(t, 1)
	rng := rand.NewChaCha8([32]byte{1})
	env, err := NewEnvelope(key)
	if err != nil {
		t.Fatal(err)
	}
	for _, pt := range [][]byte{nil, {}, []byte("x"), bytes.Repeat([]byte{0xab}, 1000)} {
		sealed, err := Seal(rng, key, testHeader, pt)
		if err != nil {
			t.Fatal(err)
		}
		if len(sealed) != len(pt)+EnvelopeOverhead {
			t.Errorf("sealed %d bytes into %d, want %d", len(pt), len(sealed), len(pt)+EnvelopeOverhead)
		}
		got, err := Open(key, testHeader, sealed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, pt) {
			t.Errorf("Open = %x, want %x", got, pt)
		}
		// The Envelope type and the functions interoperate.
		if got, err := env.Open(testHeader, sealed); err != nil || !bytes.Equal(got, pt) {
			t.Errorf("Envelope.Open = %x, %v", got, err)
		}
		sealed2, err := env.Seal(rng, testHeader, pt)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Open(key, testHeader, sealed2); err != nil || !bytes.Equal(got, pt) {
			t.Errorf("Open(Envelope.Seal) = %x, %v", got, err)
		}
	}
}

func TestEnvelopeHeaderBinding(t *testing.T) {
	key := testEnvelopeKey(t, 2)
	sealed, err := Seal(rand.NewChaCha8([32]byte{2}), key, testHeader, []byte("masked score"))
	if err != nil {
		t.Fatal(err)
	}
	change := func(f func(*Header)) Header {
		h := testHeader
		f(&h)
		return h
	}
	tests := []struct {
		name string
		h    Header
	}{
		{"session", change(func(h *Header) { h.Session = "sess-2" })},
		{"session empty", change(func(h *Header) { h.Session = "" })},
		{"step", change(func(h *Header) { h.Step++ })},
		{"step high bit", change(func(h *Header) { h.Step |= 1 << 63 })},
		{"iteration", change(func(h *Header) { h.Iteration-- })},
		{"from", change(func(h *Header) { h.From = "owner/3" })},
		{"to", change(func(h *Header) { h.To = "controller" })},
		{"from and to swapped", change(func(h *Header) { h.From, h.To = h.To, h.From })},
		// Length prefixes keep field boundaries apart.
		{"boundary moved", change(func(h *Header) { h.Session, h.From = "sess-1owner/2", "" })},
		{"everything", Header{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Open(key, tt.h, sealed); !errors.Is(err, ErrEnvelopeAuth) {
				t.Errorf("err = %v, want ErrEnvelopeAuth", err)
			}
		})
	}
	if _, err := Open(testEnvelopeKey(t, 3), testHeader, sealed); !errors.Is(err, ErrEnvelopeAuth) {
		t.Errorf("wrong key: err = %v, want ErrEnvelopeAuth", err)
	}
}

func TestEnvelopeChannelInfoIsUnambiguous(t *testing.T) {
	a, _ := channelInfo("ab", "c", "")
	b, _ := channelInfo("a", "bc", "")
	c, _ := channelInfo("a", "b", "c")
	if a == b || b == c || a == c {
		t.Error("different channels share a key derivation input")
	}
}

func TestEnvelopeTamper(t *testing.T) {
	key := testEnvelopeKey(t, 4)
	sealed, err := Seal(rand.NewChaCha8([32]byte{4}), key, testHeader, []byte("sixteen byte msg"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range len(sealed) * 8 {
		bad := bytes.Clone(sealed)
		bad[i/8] ^= 1 << (i % 8)
		if _, err := Open(key, testHeader, bad); !errors.Is(err, ErrEnvelopeAuth) {
			t.Fatalf("bit %d flipped: err = %v, want ErrEnvelopeAuth", i, err)
		}
	}
	for n := range len(sealed) {
		_, err := Open(key, testHeader, sealed[:n])
		want := ErrEnvelopeAuth
		if n < EnvelopeOverhead {
			want = ErrEnvelopeTooShort
		}
		if !errors.Is(err, want) {
			t.Errorf("truncated to %d bytes: err = %v, want %v", n, err, want)
		}
	}
	if _, err := Open(key, testHeader, append(bytes.Clone(sealed), 0)); !errors.Is(err, ErrEnvelopeAuth) {
		t.Errorf("extended by a byte: err = %v, want ErrEnvelopeAuth", err)
	}
}

func TestEnvelopeFreshNonce(t *testing.T) {
	key := testEnvelopeKey(t, 5)
	rng := rand.NewChaCha8([32]byte{5})
	msg := []byte("same message")
	a, err := Seal(rng, key, testHeader, msg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Seal(rng, key, testHeader, msg)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, b) || bytes.Equal(a[:EnvelopeNonceSize], b[:EnvelopeNonceSize]) {
		t.Error("two seals of the same message share a nonce")
	}
}

func TestEnvelopeRandomnessFailure(t *testing.T) {
	if _, err := NewEnvelopeKey(bytes.NewReader(make([]byte, 31))); err == nil {
		t.Error("NewEnvelopeKey succeeded on a short read")
	}
	if _, err := Seal(bytes.NewReader(nil), EnvelopeKey{}, testHeader, []byte("x")); err == nil {
		t.Error("Seal succeeded without randomness")
	}
}

func FuzzOpen(f *testing.F) {
	key := testEnvelopeKey(f, 6)
	sealed, err := Seal(rand.NewChaCha8([32]byte{6}), key, testHeader, []byte("payload"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sealed, "sess-1", uint64(3), uint32(7), "owner/2", "comp")
	f.Add([]byte{}, "", uint64(0), uint32(0), "", "")
	f.Add(make([]byte, EnvelopeOverhead), "s", uint64(1), uint32(1), "a", "b")
	env, err := NewEnvelope(key)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte, session string, step uint64, iter uint32, from, to string) {
		h := Header{Session: session, Step: step, Iteration: iter, From: from, To: to}
		pt, err := env.Open(h, b)
		if err == nil && (h != testHeader || !bytes.Equal(b, sealed) || string(pt) != "payload") {
			t.Errorf("forged envelope opened: header %+v, %x", h, b)
		}
	})
}

// BenchmarkSeal and BenchmarkOpen measure 64-byte payloads, both with an
// Envelope (cipher built once) and with the package functions (cipher built
// per call).
func BenchmarkSeal(b *testing.B) {
	key := testEnvelopeKey(b, 7)
	env, err := NewEnvelope(key)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.NewChaCha8([32]byte{7})
	msg := make([]byte, 64)
	b.Run("Envelope", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			if _, err := env.Seal(rng, testHeader, msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("func", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			if _, err := Seal(rng, key, testHeader, msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkOpen(b *testing.B) {
	key := testEnvelopeKey(b, 8)
	env, err := NewEnvelope(key)
	if err != nil {
		b.Fatal(err)
	}
	sealed, err := env.Seal(rand.NewChaCha8([32]byte{8}), testHeader, make([]byte, 64))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Envelope", func(b *testing.B) {
		b.SetBytes(64)
		for b.Loop() {
			if _, err := env.Open(testHeader, sealed); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("func", func(b *testing.B) {
		b.SetBytes(64)
		for b.Loop() {
			if _, err := Open(key, testHeader, sealed); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestChannel: a Channel seals and opens exactly what Seal and Open do,
// appends after dst's contents, reuses its storage, and binds the header as
// tightly: another step, iteration, session, sender or recipient fails.
func TestChannel(t *testing.T) {
	key := testEnvelopeKey(t, 9)
	env, err := NewEnvelope(key)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.NewChaCha8([32]byte{9})
	ch, err := env.Channel(testHeader.Session, testHeader.From, testHeader.To)
	if err != nil {
		t.Fatal(err)
	}
	pt := []byte("masked score")
	dst := make([]byte, 3, 3+EnvelopeOverhead+len(pt))
	copy(dst, "abc")
	sealed, err := ch.AppendSeal(dst, rng, testHeader.Step, testHeader.Iteration, pt)
	if err != nil {
		t.Fatal(err)
	}
	if string(sealed[:3]) != "abc" || len(sealed) != 3+EnvelopeOverhead+len(pt) || &sealed[0] != &dst[0] {
		t.Fatalf("AppendSeal did not append in place: %x", sealed)
	}
	if got, err := env.Open(testHeader, sealed[3:]); err != nil || !bytes.Equal(got, pt) {
		t.Errorf("Open(AppendSeal) = %q, %v", got, err)
	}
	other, err := env.Seal(rng, testHeader, pt)
	if err != nil {
		t.Fatal(err)
	}
	plain := make([]byte, 0, 64)
	got, err := ch.AppendOpen(plain, testHeader.Step, testHeader.Iteration, other)
	if err != nil || !bytes.Equal(got, pt) || &got[0] != &plain[:1][0] {
		t.Errorf("AppendOpen(Seal) = %q, %v (in place: %v)", got, err, err == nil && &got[0] == &plain[:1][0])
	}
	for _, tt := range []struct {
		name      string
		step      uint64
		iteration uint32
	}{
		{"step", testHeader.Step + 1, testHeader.Iteration},
		{"step high bit", testHeader.Step | 1<<63, testHeader.Iteration},
		{"iteration", testHeader.Step, testHeader.Iteration + 1},
		{"step and iteration swapped", uint64(testHeader.Iteration), uint32(testHeader.Step)},
	} {
		if _, err := ch.AppendOpen(nil, tt.step, tt.iteration, other); !errors.Is(err, ErrEnvelopeAuth) {
			t.Errorf("%s: err = %v, want ErrEnvelopeAuth", tt.name, err)
		}
	}
	for _, c := range [][3]string{
		{"sess-2", testHeader.From, testHeader.To},
		{testHeader.Session, testHeader.To, testHeader.From},
		{testHeader.Session, testHeader.From, "controller"},
	} {
		wrong, err := env.Channel(c[0], c[1], c[2])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := wrong.AppendOpen(nil, testHeader.Step, testHeader.Iteration, other); !errors.Is(err, ErrEnvelopeAuth) {
			t.Errorf("channel %q: err = %v, want ErrEnvelopeAuth", c, err)
		}
	}
	if _, err := ch.AppendOpen(nil, testHeader.Step, testHeader.Iteration, other[:EnvelopeOverhead-1]); !errors.Is(err, ErrEnvelopeTooShort) {
		t.Errorf("short envelope: %v", err)
	}
	if _, err := ch.AppendSeal(nil, bytes.NewReader(nil), 1, 1, pt); err == nil {
		t.Error("sealed without randomness")
	}
}

// BenchmarkChannel measures SAMBA's case: an 8-byte score sealed and opened
// on a channel, into reused buffers.
func BenchmarkChannel(b *testing.B) {
	env, err := NewEnvelope(testEnvelopeKey(b, 10))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.NewChaCha8([32]byte{10})
	ch, err := env.Channel(testHeader.Session, testHeader.From, testHeader.To)
	if err != nil {
		b.Fatal(err)
	}
	msg := make([]byte, 8)
	sealed := make([]byte, 0, EnvelopeOverhead+len(msg))
	b.Run("Seal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if sealed, err = ch.AppendSeal(sealed[:0], rng, testHeader.Step, testHeader.Iteration, msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	plain := make([]byte, 0, len(msg))
	b.Run("Open", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ch.AppendOpen(plain[:0], testHeader.Step, testHeader.Iteration, sealed); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestChannelClone: clones of a channel seal and open at the same time, each
// with its own goroutine (run with -race), and what one seals the others
// open — for the step each sealed it for, and no other.
func TestChannelClone(t *testing.T) {
	env, err := NewEnvelope(testEnvelopeKey(t, 11))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := env.Channel(testHeader.Session, testHeader.From, testHeader.To)
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 200
	sealed := make([][]byte, workers*each)
	var wg sync.WaitGroup
	for w := range workers {
		c := ch.Clone()
		wg.Go(func() {
			rng := rand.NewChaCha8([32]byte{byte(w)})
			for i := w * each; i < (w+1)*each; i++ {
				s, err := c.AppendSeal(nil, rng, uint64(i), 1, []byte{byte(i)})
				if err != nil {
					t.Error(err)
					return
				}
				sealed[i] = s
				if got, err := c.AppendOpen(nil, uint64(i), 1, s); err != nil || !bytes.Equal(got, []byte{byte(i)}) {
					t.Errorf("worker %d: envelope %d opened as %x, %v", w, i, got, err)
				}
			}
		})
	}
	wg.Wait()
	for i, s := range sealed {
		if got, err := ch.AppendOpen(nil, uint64(i), 1, s); err != nil || !bytes.Equal(got, []byte{byte(i)}) {
			t.Errorf("envelope %d opened as %x, %v", i, got, err)
		}
		if _, err := ch.AppendOpen(nil, uint64(i)+1, 1, s); !errors.Is(err, ErrEnvelopeAuth) {
			t.Errorf("envelope %d opened for step %d: %v", i, i+1, err)
		}
	}
}
