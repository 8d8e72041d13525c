package node

import (
	"github.com/bandit-node/bandit-node/internal/buildinfo"
	"github.com/bandit-node/bandit-node/node/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// registerCollectors registers the metrics that read the node when
// scraped — so that there is no state to keep in sync with it — and the
// build's: bandit_queued_bytes, bandit_ready, bandit_peer_connected,
// bandit_sessions_by_state, the data directory's health (metrics_store.go)
// and bandit_build_info. New calls it once the
// host exists.
func (n *Node) registerCollectors() {
	n.metrics.Registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "bandit_queued_bytes",
			Help: "Bytes of received frames queued in this node's sessions, not yet taken by their roles (capped by session.max_buffered_bytes and session.max_peer_buffered_bytes).",
		}, n.rt.QueuedBytes),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "bandit_ready",
			Help: "1 when this node is ready (its libp2p host listens, its data directory takes its writes and at least metrics.min_peers address-book peers are connected), 0 otherwise: what /readyz answers, for alerting rules.",
		}, func() float64 {
			if _, ok := n.ready(); ok {
				return 1
			}
			return 0
		}),
		newPeerCollector(n),
		metrics.NewSessionStates(n.rt.States),
		metrics.NewStoreCollector(n.store, n.slogs),
		newBuildInfo(buildinfo.Read(n.version)),
	)
}

// peerCollector is the collector of bandit_peer_connected: 1 for every
// address-book peer connected now, 0 for the others, by address-book name.
// The address book bounds the series.
type peerCollector struct {
	n    *Node
	desc *prometheus.Desc
}

func newPeerCollector(n *Node) *peerCollector {
	return &peerCollector{n: n, desc: prometheus.NewDesc("bandit_peer_connected",
		"Whether each address-book peer is connected to this node now (1) or not (0), by address-book name.", []string{"peer"}, nil)}
}

// Describe implements prometheus.Collector.
func (c *peerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *peerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.n.host.Peers() {
		v := 0.0
		if p.Connected {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, p.Name)
	}
}

// newBuildInfo returns bandit_build_info: 1, labelled with the running
// build's version, VCS revision (short, "+modified" for a work tree with
// uncommitted changes) and Go version.
func newBuildInfo(info buildinfo.Info) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "bandit_build_info",
		Help: "The running build: always 1, labelled with its version, VCS revision and Go version.",
		ConstLabels: prometheus.Labels{"version": info.Version, "revision": info.ShortRevision(),
			"goversion": info.GoVersion},
	})
	g.Set(1)
	return g
}
