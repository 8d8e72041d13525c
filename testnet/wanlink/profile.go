package main

import (
	"fmt"
	"sort"
	"strings"
)

// profile is one kind of wide-area link, applied to each direction of every
// proxy.
type profile struct {
	// OneWayMicros is the latency added to each direction, in µs.
	OneWayMicros int64
	// JitterMicros spreads the latency uniformly by ± this much, in µs.
	JitterMicros int64
	// RateKBps caps each direction at this many kB (1,000 bytes) a second,
	// serializing its bytes as a link does (rate.go); 0 is no cap.
	RateKBps int64
	// CloseToxicity is the share of connection directions that are closed
	// CloseAfterMillis after their first byte (toxic close_after); 0 is none.
	CloseToxicity    float64
	CloseAfterMillis int64
	// SliceToxicity is the share of connection directions whose data is cut
	// into small slices (about 64 bytes, 100 µs apart); 0 is none.
	SliceToxicity float64
}

// profiles returns the testnet's link profiles by name, as docs/operations.md
// lists them.
func profiles() map[string]profile {
	return map[string]profile{
		// none: the proxies without toxics, to measure what the namespaces
		// and the proxies themselves cost.
		"none":        {},
		"lan":         {OneWayMicros: 500},
		"metro":       {OneWayMicros: 5_000, RateKBps: 6_250},
		"continental": {OneWayMicros: 25_000, JitterMicros: 3_000, RateKBps: 2_500},
		"lossy":       {OneWayMicros: 5_000, RateKBps: 6_250, CloseToxicity: 0.02, CloseAfterMillis: 10_000, SliceToxicity: 0.1},
	}
}

func profileNames() []string {
	names := []string{}
	for n := range profiles() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// toxicSpec is one toxic as Toxiproxy's JSON takes it.
type toxicSpec struct {
	name, kind string
	toxicity   float64
	attributes string
}

// toxics lists the profile's toxics in the order data passes them.
func (p profile) toxics() []toxicSpec {
	var ts []toxicSpec
	if p.OneWayMicros > 0 || p.JitterMicros > 0 {
		ts = append(ts, toxicSpec{"latency", latencyMicrosType, 1,
			fmt.Sprintf(`{"latency_us":%d,"jitter_us":%d}`, p.OneWayMicros, p.JitterMicros)})
	}
	if p.RateKBps > 0 {
		ts = append(ts, toxicSpec{"bandwidth", rateType, 1, fmt.Sprintf(`{"rate":%d}`, p.RateKBps)})
	}
	if p.SliceToxicity > 0 {
		ts = append(ts, toxicSpec{"slicer", "slicer", p.SliceToxicity, `{"average_size":64,"size_variation":32,"delay":100}`})
	}
	if p.CloseToxicity > 0 {
		ts = append(ts, toxicSpec{"close", closeAfterType, p.CloseToxicity, fmt.Sprintf(`{"after_ms":%d}`, p.CloseAfterMillis)})
	}
	return ts
}

// describe says what the profile does, for the log.
func (p profile) describe() string {
	parts := []string{fmt.Sprintf("%.1f ms one-way", float64(p.OneWayMicros)/1e3)}
	if p.JitterMicros > 0 {
		parts = append(parts, fmt.Sprintf("± %.1f ms jitter", float64(p.JitterMicros)/1e3))
	}
	if p.RateKBps > 0 {
		parts = append(parts, fmt.Sprintf("%d Mbit/s", p.RateKBps*8/1000))
	}
	if p.SliceToxicity > 0 {
		parts = append(parts, fmt.Sprintf("%.0f %% of directions sliced", p.SliceToxicity*100))
	}
	if p.CloseToxicity > 0 {
		parts = append(parts, fmt.Sprintf("%.0f %% of directions closed %d s after their first byte", p.CloseToxicity*100, p.CloseAfterMillis/1000))
	}
	return strings.Join(parts, ", ")
}
