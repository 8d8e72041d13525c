package p2p

import (
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	goyamux "github.com/libp2p/go-yamux/v5"
)

func TestYamuxTransport(t *testing.T) {
	got := NewYamuxTransport()
	tests := []struct {
		name      string
		got, want any
	}{
		{"round-trip measurement", got.MeasureRTTInterval, 5 * time.Minute},
		{"keep-alive on", got.EnableKeepAlive, true},
		{"keep-alive interval", got.KeepAliveInterval, 30 * time.Second},
		{"stream window (go-libp2p's)", got.MaxStreamWindowSize, yamux.DefaultTransport.MaxStreamWindowSize},
		{"go-libp2p's default left alone", yamux.DefaultTransport.MeasureRTTInterval, 30 * time.Second},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if got == yamux.DefaultTransport {
		t.Fatal("NewYamuxTransport returned go-libp2p's shared default, not a copy")
	}
	if err := goyamux.VerifyConfig(got.Config()); err != nil {
		t.Fatalf("yamux rejects the configuration: %v", err)
	}
}
