package privacy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sync"
)

// Precomputer keeps a bounded pool of Paillier randomizers r^N mod N², each
// for a fresh r uniform in Z*_N, filled by background goroutines. Taking one
// turns an encryption from a modular exponentiation (about 15 ms at 2048
// bits) into a multiplication (microseconds). Each randomizer is handed out
// exactly once. A Precomputer is safe for concurrent use.
type Precomputer struct {
	pk   *PublicKey
	pool chan *big.Int
	done chan struct{} // closed once every worker has returned

	mu  sync.Mutex
	err error // why the workers stopped
}

// NewPrecomputer starts workers goroutines (at least 1) that keep up to
// size randomizers (at least 1) ready for pk, reading randomness from rand
// (crypto/rand.Reader in real sessions). The workers serialize their reads,
// so rand need not be safe for concurrent use, but the caller must not read
// it concurrently elsewhere unless it is. The workers stop when ctx ends,
// each within one exponentiation; Done reports when they all have.
func NewPrecomputer(ctx context.Context, pk *PublicKey, rand io.Reader, size, workers int) *Precomputer {
	size = max(size, 1)
	workers = max(workers, 1)
	p := &Precomputer{
		pk:   pk,
		pool: make(chan *big.Int, size),
		done: make(chan struct{}),
	}
	src := &lockedReader{r: rand}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { p.fill(ctx, src) })
	}
	go func() {
		wg.Wait()
		close(p.done)
	}()
	return p
}

// fill computes randomizers into the pool until ctx ends or randomness
// fails.
func (p *Precomputer) fill(ctx context.Context, src io.Reader) {
	for {
		if ctx.Err() != nil {
			p.stop(context.Cause(ctx))
			return
		}
		rn, err := p.pk.randomRN(src)
		if err != nil {
			p.stop(err)
			return
		}
		select {
		case p.pool <- rn:
		case <-ctx.Done():
			p.stop(context.Cause(ctx))
			return
		}
	}
}

func (p *Precomputer) stop(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

func (p *Precomputer) stopErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		return errors.New("stopped")
	}
	return p.err
}

// Done returns a channel that is closed once all the Precomputer's
// goroutines have returned.
func (p *Precomputer) Done() <-chan struct{} {
	return p.done
}

// Next takes one randomizer r^N mod N² from the pool, waiting for one if the
// pool is empty. It fails if ctx ends first, or if the workers have stopped
// (their context ended or randomness failed) and the pool is empty.
func (p *Precomputer) Next(ctx context.Context) (*big.Int, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("waiting for a precomputed paillier randomizer: %w", context.Cause(ctx))
	}
	select {
	case rn := <-p.pool:
		return rn, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a precomputed paillier randomizer: %w", context.Cause(ctx))
	case <-p.done:
		select {
		case rn := <-p.pool:
			return rn, nil
		default:
		}
		return nil, fmt.Errorf("paillier precomputer has stopped and has no randomizer left: %w", p.stopErr())
	}
}

// EncryptFast encrypts m, which must lie in [0, N), with the next
// precomputed randomizer; see PublicKey.Encrypt. The range is checked before
// a randomizer is taken, so a rejected plaintext wastes none. Unlike
// EncryptWith it does not re-check the randomizer (a gcd costing more than
// the encryption itself): the pool's values are r^N for units r it drew.
func (p *Precomputer) EncryptFast(ctx context.Context, m *big.Int) (*Ciphertext, error) {
	if err := p.pk.checkPlaintext(m); err != nil {
		return nil, err
	}
	rn, err := p.Next(ctx)
	if err != nil {
		return nil, fmt.Errorf("paillier encryption: %w", err)
	}
	return p.pk.encryptWith(m, rn), nil
}

// lockedReader serializes reads from a reader that may not be safe for
// concurrent use. Concurrent ReadFull calls may interleave, which is harmless:
// every byte still goes to exactly one caller.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(b)
}
