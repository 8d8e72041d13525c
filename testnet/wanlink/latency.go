package main

import (
	"math/rand/v2"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// latencyMicrosType is the name latencyMicros is registered under.
const latencyMicrosType = "latency_us"

// latencyMicros is Toxiproxy's latency toxic in microseconds: the built-in
// one counts whole milliseconds, too coarse for the lan profile's 0.5 ms.
// Each chunk leaves latency ± jitter after it was read, so chunks in flight
// overlap instead of queueing behind each other's delay.
type latencyMicros struct {
	Latency int64 `json:"latency_us"`
	Jitter  int64 `json:"jitter_us"`
}

// GetBufferSize implements toxics.BufferedToxic, as the built-in latency
// toxic does.
func (t *latencyMicros) GetBufferSize() int { return 1024 }

func (t *latencyMicros) delay() time.Duration {
	d := t.Latency
	if t.Jitter > 0 {
		d += rand.Int64N(2*t.Jitter+1) - t.Jitter
	}
	return time.Duration(d) * time.Microsecond
}

// Pipe implements toxics.Toxic.
func (t *latencyMicros) Pipe(stub *toxics.ToxicStub) {
	eachChunk(stub, func(c *stream.StreamChunk) bool {
		sleep := t.delay() - time.Since(c.Timestamp)
		timer := time.NewTimer(sleep)
		select {
		case <-timer.C:
			c.Timestamp = c.Timestamp.Add(sleep)
			stub.Output <- c
			return true
		case <-stub.Interrupt:
			timer.Stop()
			stub.Output <- c // pass it on undelayed rather than lose it
			return false
		}
	})
}

// eachChunk is a toxic's loop: it hands each chunk of stub's input to pass,
// until the input ends (then it closes the stub), the toxic is interrupted
// between chunks, or pass reports that it was interrupted during one.
func eachChunk(stub *toxics.ToxicStub, pass func(c *stream.StreamChunk) (more bool)) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if !pass(c) {
				return
			}
		}
	}
}
