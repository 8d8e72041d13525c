package main

import (
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// rateType is the name rate is registered under.
const rateType = "rate_kBps"

// rate caps a direction of a connection at Rate kB (1,000 bytes) a second,
// as a link's sender serializes its bytes: each byte leaves once the bytes
// before it have, at the rate, and the bytes of a chunk leave as they are
// serialized, a piece of about a millisecond's worth at a time.
//
// Toxiproxy's own bandwidth toxic models neither: it holds a whole chunk
// (up to 32 KiB, what one read of the connection returned) for the chunk's
// transmission time before passing any of it on — a reader that could start
// on a large write's first frames sees none of them until its last byte
// "arrived" — and it carries a sleep that ended late (its timers wake up to a
// millisecond late on a loaded machine) over to the next chunk as credit,
// without bound, so a connection that carried many small chunks passes
// later ones at no rate at all. Here a link idle since a chunk's bytes would
// have left does not bank that time (it starts at the chunk's arrival, its
// timestamp), and a piece's deadline is absolute, so a late wake-up delays
// the pieces then due, not every later one.
type rate struct {
	Rate int64 `json:"rate"` // kB a second: bytes a millisecond
}

// ratePieceMin is the smallest piece a chunk is cut into: about an Ethernet
// frame's payload.
const ratePieceMin = 1460

// piece is the bytes passed on at once: a millisecond at the rate.
func (t *rate) piece() int { return max(ratePieceMin, int(t.Rate)) }

// serialization is how long n bytes take at the rate.
func (t *rate) serialization(n int) time.Duration {
	return time.Duration(n) * time.Millisecond / time.Duration(t.Rate)
}

// Pipe implements toxics.Toxic.
func (t *rate) Pipe(stub *toxics.ToxicStub) {
	var busy time.Time // when the bytes passed on so far have left
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	eachChunk(stub, func(c *stream.StreamChunk) bool {
		if t.Rate <= 0 {
			stub.Output <- c
			return true
		}
		// The chunk reached the sender at its timestamp (when it was
		// read, or left the toxic before): it starts once the link is
		// free, and an idle link is not owed the time it idled.
		if busy.Before(c.Timestamp) {
			busy = c.Timestamp
		}
		for data := c.Data; len(data) > 0; {
			n := min(len(data), t.piece())
			busy = busy.Add(t.serialization(n))
			if wait := time.Until(busy); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-stub.Interrupt:
					timer.Stop()
					stub.Output <- &stream.StreamChunk{Data: data, Timestamp: c.Timestamp} // pass it on rather than lose it
					return false
				}
			}
			stub.Output <- &stream.StreamChunk{Data: data[:n:n], Timestamp: busy}
			data = data[n:]
		}
		return true
	})
}
