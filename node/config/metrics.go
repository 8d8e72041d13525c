package config

import (
	"fmt"
	"net"
)

// MetricsConfig is the [metrics] table: the metrics listener, a read-only
// HTTP listener without a token for a monitoring system, apart from the
// control API (metricsserver.go).
type MetricsConfig struct {
	// Listen is the metrics listener's host:port, such as
	// "0.0.0.0:9601"; "" (the default) serves no metrics listener. It
	// serves /metrics, /healthz and /readyz, and nothing that changes
	// anything.
	Listen string `toml:"listen"`
	// MinPeers is how many address-book peers must be connected for
	// /readyz to answer 200; at most the number of [[peers]].
	MinPeers int `toml:"min_peers"`
}

// DefaultMetricsMinPeers is the default of metrics.min_peers.
const DefaultMetricsMinPeers = 1

// DefaultMetricsConfig returns the [metrics] table's defaults: no
// listener, and ready with one peer connected.
func DefaultMetricsConfig() MetricsConfig {
	return MetricsConfig{MinPeers: DefaultMetricsMinPeers}
}

// validate checks the table of a node whose address book has peers
// entries. min_peers is checked against the address book only when the
// listener is on: it means nothing otherwise.
func (m MetricsConfig) validate(peers int) error {
	if m.MinPeers < 0 {
		return fmt.Errorf("metrics.min_peers: must be at least 0, got %d", m.MinPeers)
	}
	if m.Listen == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(m.Listen)
	if err != nil {
		return fmt.Errorf("metrics.listen: %q is not host:port, such as \"0.0.0.0:9601\": %w", m.Listen, err)
	}
	if host != "" && net.ParseIP(host) == nil && host != "localhost" {
		return fmt.Errorf("metrics.listen: %q: the host must be an IP address (or localhost), such as 0.0.0.0 or 127.0.0.1", m.Listen)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("metrics.listen: %q: %w", m.Listen, err)
	}
	if m.MinPeers > peers {
		return fmt.Errorf("metrics.min_peers: %d is more than the %d peers of the address book ([[peers]]), so /readyz could never answer ready; "+
			"set it to at most %d", m.MinPeers, peers, peers)
	}
	return nil
}
