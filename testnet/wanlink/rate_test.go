package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// rateRun starts a rate toxic of kBps on a stub of its own and returns its
// input and output; the toxic stops with the test.
func rateRun(t *testing.T, kBps int64) (chan<- *stream.StreamChunk, <-chan *stream.StreamChunk) {
	t.Helper()
	in, out := make(chan *stream.StreamChunk), make(chan *stream.StreamChunk, 1024)
	stub := toxics.NewToxicStub(in, out)
	done := make(chan struct{})
	go func() { defer close(done); (&rate{Rate: kBps}).Pipe(stub) }()
	t.Cleanup(func() { close(stub.Interrupt); <-done })
	return in, out
}

// pieces reads the pieces of n bytes from out.
func pieces(t *testing.T, out <-chan *stream.StreamChunk, n int) []*stream.StreamChunk {
	t.Helper()
	var ps []*stream.StreamChunk
	for got := 0; got < n; {
		select {
		case p := <-out:
			ps = append(ps, p)
			got += len(p.Data)
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d bytes came out", got, n)
		}
	}
	return ps
}

// TestRateSerializesAChunk: a chunk leaves in pieces of a millisecond at
// the rate, each due a millisecond after the one before — the first one
// after one millisecond, not after the whole chunk's time — and none
// before it is due; the bytes are the chunk's, in order.
func TestRateSerializesAChunk(t *testing.T) {
	in, out := rateRun(t, 2_500)
	data := bytes.Repeat([]byte("0123456789"), 2_500) // 25,000 bytes: 10 ms
	start := time.Now()
	in <- &stream.StreamChunk{Data: data, Timestamp: start}
	ps := pieces(t, out, len(data))
	if len(ps) != 10 {
		t.Fatalf("%d pieces, want 10 of 2,500 bytes", len(ps))
	}
	var got []byte
	for i, p := range ps {
		got = append(got, p.Data...)
		if len(p.Data) != 2_500 {
			t.Errorf("piece %d of %d bytes, want 2,500", i, len(p.Data))
		}
		if i > 0 {
			if d := p.Timestamp.Sub(ps[i-1].Timestamp); d != time.Millisecond {
				t.Errorf("piece %d due %v after the one before, want 1ms", i, d)
			}
		}
	}
	if first := ps[0].Timestamp.Sub(start); first < time.Millisecond || first > 2*time.Millisecond {
		t.Errorf("the first piece due %v after the chunk came, want its own millisecond", first)
	}
	if !bytes.Equal(got, data) {
		t.Error("the pieces are not the chunk's bytes in order")
	}
	if took := time.Since(start); took < 10*time.Millisecond {
		t.Errorf("25,000 bytes passed in %v at 2,500 bytes a millisecond", took)
	}
}

// TestRateQueuesAndDoesNotBankIdleTime: a chunk that comes while the link
// still sends the last one leaves right after it; one that comes after the
// link idled leaves a piece's time after it came — the idle time is not
// credit (Toxiproxy's bandwidth toxic would pass it at once).
func TestRateQueuesAndDoesNotBankIdleTime(t *testing.T) {
	in, out := rateRun(t, 2_500)
	chunk := func() []byte { return bytes.Repeat([]byte{'x'}, 5_000) } // 2 ms
	// Both chunks reach the link at the same moment (their timestamps:
	// the test's goroutine may run late on a loaded machine, the link's
	// clock is the chunks').
	both := time.Now()
	in <- &stream.StreamChunk{Data: chunk(), Timestamp: both}
	in <- &stream.StreamChunk{Data: chunk(), Timestamp: both}
	ps := pieces(t, out, 10_000)
	if len(ps) != 4 {
		t.Fatalf("%d pieces, want 4", len(ps))
	}
	if d := ps[2].Timestamp.Sub(ps[1].Timestamp); d != time.Millisecond {
		t.Errorf("the queued chunk's first piece due %v after the last one's, want 1ms", d)
	}
	time.Sleep(50 * time.Millisecond) // idle
	came := time.Now()
	in <- &stream.StreamChunk{Data: chunk(), Timestamp: came}
	ps = pieces(t, out, 5_000)
	if d := ps[0].Timestamp.Sub(came); d < time.Millisecond {
		t.Errorf("after 50 ms idle, a chunk's first piece was due %v after it came, want at least 1ms", d)
	}
	if left := time.Since(came); left < 2*time.Millisecond {
		t.Errorf("after 50 ms idle, 5,000 bytes passed in %v, want at least 2 ms", left)
	}
}
