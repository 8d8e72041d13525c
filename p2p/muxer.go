package p2p

import (
	"time"

	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
)

// yamuxRTTInterval is how often yamux measures a connection's round-trip
// time. yamux's default is 30 s, on every connection and from both ends,
// whether the connection is busy or idle. yamux uses the measurement only to
// decide whether a stream's receive window may grow, for which a reading
// refreshed every 5 minutes is as good (a connection is measured when it is
// opened, then at this interval).
const yamuxRTTInterval = 5 * time.Minute

// NewYamuxTransport returns go-libp2p's yamux configuration with the
// round-trip measurement every 5 minutes instead of 30 s; everything else
// is go-libp2p's choice. In particular yamux's keep-alive stays: each end
// of a connection on which it has received nothing for 30 s pings it, and
// closes it if the answer does not come within 10 s of the ping being sent
// — that, not the round-trip measurement, is what finds a dead peer. An
// idle connection now carries one or two keep-alive pings every 30 s
// instead of two round-trip pings besides, which matters to an idle daemon
// with a hundred connections (bench/HISTORY.md).
func NewYamuxTransport() *yamux.Transport {
	t := *yamux.DefaultTransport // a copy: the default is shared by every host in the process
	t.MeasureRTTInterval = yamuxRTTInterval
	return &t
}
