package p2p

import (
	"math/rand/v2"
	"time"
)

// backoff computes exponentially growing waits with "equal jitter": the n-th
// wait is uniformly distributed in [d/2, d], where d = min(min*2^n, max).
// It is not safe for concurrent use.
type backoff struct {
	min, max time.Duration
	cur      time.Duration
	// randN returns a uniform value in [0, n); rand.Int64N unless a test
	// injects a deterministic source.
	randN func(n int64) int64
}

func newBackoff(min, max time.Duration) *backoff {
	return &backoff{min: min, max: max, randN: rand.Int64N}
}

// Next returns the next wait and doubles the following one, up to max.
func (b *backoff) Next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	}
	d := b.cur
	if b.cur < b.max {
		b.cur = min(2*b.cur, b.max)
	}
	half := d / 2
	return half + time.Duration(b.randN(int64(d-half)+1))
}

// Reset makes the next wait start again from min.
func (b *backoff) Reset() { b.cur = 0 }
