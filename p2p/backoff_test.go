package p2p

import (
	"testing"
	"time"
)

func TestBackoffBounds(t *testing.T) {
	tests := []struct {
		name  string
		randN func(int64) int64
		want  []time.Duration
	}{
		{
			name:  "lowest jitter",
			randN: func(int64) int64 { return 0 },
			want:  []time.Duration{50, 100, 200, 400, 500, 500},
		},
		{
			name:  "highest jitter",
			randN: func(n int64) int64 { return n - 1 },
			want:  []time.Duration{100, 200, 400, 800, 1000, 1000},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBackoff(100, 1000)
			b.randN = tc.randN
			for i, want := range tc.want {
				if got := b.Next(); got != want {
					t.Fatalf("wait %d = %v, want %v", i, got, want)
				}
			}
			b.Reset()
			if got := b.Next(); got != tc.want[0] {
				t.Fatalf("after Reset: wait = %v, want %v", got, tc.want[0])
			}
		})
	}
}

func TestBackoffRandomWithinBounds(t *testing.T) {
	b := newBackoff(10*time.Millisecond, time.Second)
	limit := 10 * time.Millisecond
	for range 100 {
		got := b.Next()
		if got < limit/2 || got > limit {
			t.Fatalf("wait %v outside [%v, %v]", got, limit/2, limit)
		}
		limit = min(2*limit, time.Second)
	}
}
