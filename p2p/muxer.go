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

// yamuxInitialWindow is the receive window every stream grants its sender
// as soon as it is opened: how many bytes the sender may have written that
// the receiver has not yet read. yamux starts a stream at 256 KiB and
// doubles the window only when two of its updates come within 4 round
// trips, a test that a larger window can no longer pass on a long link
// (filling half of it takes longer than that): on a 50 ms round trip the
// window stops at about 512 KiB (go-yamux issue #136, open). Then a sender
// of a large message waits for every update, a round trip each, and a
// 20 Mbit/s link between continents idles between them — the private
// contextual bandit's batches, whose rounds carry up to 1.7 MB each way,
// took 4 % longer (docs/performance.md). From 4 MiB a sender keeps a link
// busy up to about 20 MiB/s on a 100 ms round trip (half the window a round
// trip), whatever yamux's own growth does; where that works it still takes
// the window on to MaxStreamWindowSize. The price is memory that go-yamux does not reserve with
// the resource manager (it reserves only its 256 KiB minimum): data
// received on a stream and not yet read, at most this much a stream. Every
// stream of a daemon has a reader that reads as data comes (the messenger's,
// gossipsub's, identify's and ping's), so the buffer holds more than a frame
// only while a reader is behind.
const yamuxInitialWindow = 4 << 20

// NewYamuxTransport returns go-libp2p's yamux configuration with the
// round-trip measurement every 5 minutes instead of 30 s and a stream's
// window starting at 4 MiB instead of 256 KiB (yamuxInitialWindow);
// everything else is go-libp2p's choice. In particular yamux's keep-alive
// stays: each end of a connection on which it has received nothing for 30 s
// pings it, and closes it if the answer does not come within 10 s of the
// ping being sent — that, not the round-trip measurement, is what finds a
// dead peer. An idle connection now carries one or two keep-alive pings
// every 30 s instead of two round-trip pings besides, which matters to an
// idle daemon with a hundred connections (bench/HISTORY.md).
func NewYamuxTransport() *yamux.Transport {
	t := *yamux.DefaultTransport // a copy: the default is shared by every host in the process
	t.MeasureRTTInterval = yamuxRTTInterval
	t.InitialStreamWindowSize = yamuxInitialWindow
	return &t
}
