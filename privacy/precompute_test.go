package privacy

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

func TestPrecomputer(t *testing.T) {
	sk := testKey(t, 512, 10)
	pk := &sk.PublicKey
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pre := NewPrecomputer(ctx, pk, rand.NewChaCha8([32]byte{10}), 4, 3)
	seen := map[string]bool{}
	for i := range 20 {
		m := big.NewInt(int64(i * 1000))
		c, err := pre.EncryptFast(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := sk.Decrypt(c); err != nil || got.Cmp(m) != 0 {
			t.Fatalf("Decrypt(EncryptFast(%v)) = %v, %v", m, got, err)
		}
		rn, err := pre.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if seen[rn.String()] {
			t.Fatal("a randomizer was handed out twice")
		}
		seen[rn.String()] = true
		if c, err := pk.EncryptWith(m, rn); err != nil {
			t.Fatal(err)
		} else if got, _ := sk.Decrypt(c); got.Cmp(m) != 0 {
			t.Fatalf("Decrypt(EncryptWith(%v)) = %v", m, got)
		}
	}
}

func TestPrecomputerNextHonoursContext(t *testing.T) {
	sk := testKey(t, 512, 11)
	pk := &sk.PublicKey
	// A reader that blocks keeps the pool empty.
	block := make(chan struct{})
	defer close(block)
	pre := NewPrecomputer(t.Context(), pk, blockingReader(block), 2, 1)

	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := pre.Next(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with a cancelled context: err = %v, want context.Canceled", err)
	}
	short, cancel2 := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel2()
	start := time.Now()
	if _, err := pre.Next(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Next on an empty pool: err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Next took %v to notice its deadline", d)
	}
	// A cancelled context also wins over a full pool.
	full := NewPrecomputer(t.Context(), pk, rand.NewChaCha8([32]byte{11}), 1, 1)
	if _, err := full.Next(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := full.Next(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with a cancelled context: err = %v, want context.Canceled", err)
	}
}

// blockingReader blocks every read until release is closed, then fails.
type blockingReader chan struct{}

func (r blockingReader) Read([]byte) (int, error) {
	<-r
	return 0, errors.New("reader closed")
}

func TestPrecomputerStopsWithoutLeak(t *testing.T) {
	sk := testKey(t, 512, 12)
	pk := &sk.PublicKey
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(t.Context())
	pre := NewPrecomputer(ctx, pk, rand.NewChaCha8([32]byte{12}), 8, 4)
	if _, err := pre.Next(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-pre.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("workers did not stop after the context ended")
	}
	// The pool may still hold values; once drained, Next reports the stop.
	for {
		_, err := pre.Next(t.Context())
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Next after stop: err = %v, want context.Canceled", err)
			}
			break
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after stop, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPrecomputerRandomnessFailure(t *testing.T) {
	sk := testKey(t, 512, 13)
	pre := NewPrecomputer(t.Context(), &sk.PublicKey, bytes.NewReader(nil), 2, 2)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := pre.Next(ctx); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Next with failed randomness: err = %v, want the read error", err)
	}
}
