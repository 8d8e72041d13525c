package main

import (
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// closeAfterType is the name closeAfter is registered under.
const closeAfterType = "close_after"

// closeAfter passes data through untouched and closes the connection a set
// time after its first byte: a connection lost in the middle of a session.
// Toxiproxy's own reset_peer toxic holds the first chunk back until it
// resets, so it only ever breaks a connection before its handshake is done,
// which a dialer simply retries.
type closeAfter struct {
	AfterMillis int64 `json:"after_ms"`
}

// Pipe implements toxics.Toxic.
func (t *closeAfter) Pipe(stub *toxics.ToxicStub) {
	var deadline <-chan time.Time
	for {
		select {
		case <-stub.Interrupt:
			return
		case <-deadline:
			stub.Close()
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if deadline == nil {
				deadline = time.After(time.Duration(t.AfterMillis) * time.Millisecond)
			}
			stub.Output <- c
		}
	}
}
