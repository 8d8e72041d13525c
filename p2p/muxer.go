package p2p

import (
	"time"

	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
)

// yamuxRTTInterval is how often yamux measures a connection's round-trip
// time. yamux's default is 30 s, on every connection and from both ends,
// whether the connection is busy or idle: a daemon of a 103-organization
// network answered or sent about 7 such pings a second while idle, about a
// third of its CPU beyond the Go runtime's own. yamux uses the measurement
// only to decide how fast a stream's receive window grows, for which a
// reading refreshed every 5 minutes is as good (a connection is measured
// when it is opened, then at this interval).
const yamuxRTTInterval = 5 * time.Minute

// newYamuxTransport returns go-libp2p's yamux configuration with the
// round-trip measurement every yamuxRTTInterval. Everything else is
// go-libp2p's choice, in particular yamux's keep-alive: a connection on which
// nothing was received for 30 s is pinged, and closed if the ping is not
// answered within the connection write timeout (10 s). That keep-alive, not
// the round-trip measurement, is what finds a dead peer; it pings only idle
// connections, and one ping resets the timers at both ends, so an idle
// connection now carries one ping every 30 s instead of two.
func newYamuxTransport() *yamux.Transport {
	t := *yamux.DefaultTransport // a copy: the default is shared by every host in the process
	t.MeasureRTTInterval = yamuxRTTInterval
	return &t
}
