package p2p

import (
	"testing"
)

func TestLimitConfigIsExplicit(t *testing.T) {
	cfg := limitConfig()
	scopes := map[string]bool{
		"System":               !cfg.System.IsDefault(),
		"Transient":            !cfg.Transient.IsDefault(),
		"AllowlistedSystem":    !cfg.AllowlistedSystem.IsDefault(),
		"AllowlistedTransient": !cfg.AllowlistedTransient.IsDefault(),
		"ServiceDefault":       !cfg.ServiceDefault.IsDefault(),
		"ServicePeerDefault":   !cfg.ServicePeerDefault.IsDefault(),
		"ProtocolDefault":      !cfg.ProtocolDefault.IsDefault(),
		"ProtocolPeerDefault":  !cfg.ProtocolPeerDefault.IsDefault(),
		"PeerDefault":          !cfg.PeerDefault.IsDefault(),
		"Conn":                 !cfg.Conn.IsDefault(),
		"Stream":               !cfg.Stream.IsDefault(),
	}
	for name, explicit := range scopes {
		if !explicit {
			t.Errorf("scope %s is left to libp2p's defaults", name)
		}
	}
}

func TestLimiterValues(t *testing.T) {
	l := newLimiter()
	if got := l.GetSystemLimits().GetConnTotalLimit(); got != limitSystemConns {
		t.Errorf("system connection limit = %d, want %d", got, limitSystemConns)
	}
	if got := l.GetPeerLimits("").GetStreamTotalLimit(); got != limitStreamsPerPeer {
		t.Errorf("per-peer stream limit = %d, want %d", got, limitStreamsPerPeer)
	}
	if got := l.GetProtocolPeerLimits("/bandit/test/1.0.0").GetStreamTotalLimit(); got != limitStreamsPerPeerProtocol {
		t.Errorf("per-peer, per-protocol stream limit = %d, want %d", got, limitStreamsPerPeerProtocol)
	}
	if got := l.GetStreamLimits("").GetMemoryLimit(); got != limitStreamMemory {
		t.Errorf("stream memory limit = %d, want %d", got, limitStreamMemory)
	}
}
