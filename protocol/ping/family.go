package ping

import (
	"fmt"
	"sort"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping/pingpb"
	"google.golang.org/protobuf/proto"
)

// Name is the family's name in specs.
const Name = "ping"

// RoleParticipant is the only role.
const RoleParticipant = "participant"

// MaxParticipants bounds a ping session (n² links are measured).
const MaxParticipants = 256

// Params are the public parameters of a ping session.
type Params struct {
	// Count is the number of round trips each participant makes to each other one.
	Count int `toml:"count"`
}

// DefaultParams returns the defaults: 10 round trips per link.
func DefaultParams() Params { return Params{Count: 10} }

// MaxCount bounds Count.
const MaxCount = 1_000_000

func (p Params) validate() error {
	if p.Count < 1 || p.Count > MaxCount {
		return fmt.Errorf("params.count: %d is out of range [1, %d]", p.Count, MaxCount)
	}
	return nil
}

// Family is the ping protocol family, as a registry holds it: family
// erased (protocol.Erased).
type Family struct {
	protocol.Erased[family, Params, Matrix]
}

// The zero Family erases family{}; spelled out, so that tools see family used.
var _ protocol.Family = Family{protocol.Erased[family, Params, Matrix]{Typed: family{}}}

// family is the ping protocol family with its own types.
type family struct{}

// Name is protocol.Family's Name.
func (family) Name() string { return Name }

// Info is protocol.Family's Info. Every ping message is small: a
// participant decodes a message into a value of its own and keeps nothing
// of its bytes.
func (family) Info() protocol.Info {
	return protocol.Info{Roles: roles(), Separations: separations(), SmallMessages: true}
}

// CheckAssignment is protocol.Family's CheckAssignment: every assignment the roles'
// bounds allow can run.
func (family) CheckAssignment(protocol.Assignment, Params, bool) error { return nil }

// roles are the family's roles.
func roles() []protocol.RoleSpec {
	return []protocol.RoleSpec{{Name: RoleParticipant, Min: 2, Max: MaxParticipants,
		Doc:    "measures the round-trip time to every other participant",
		Learns: "the round-trip times to the other participants, nothing else: ping carries no private data"}}
}

// ParseParams is protocol.Family's ParseParams.
func (family) ParseParams(raw map[string]any) (Params, error) {
	return protocol.ParseParams(raw, DefaultParams(), Params.validate)
}

// DecodeLocal is protocol.Family's DecodeLocal: ping needs no local data, and any
// [local.ping.participant] table is an error.
func (family) DecodeLocal(role string, table *protocol.LocalTable) (any, error) {
	return protocol.NoLocalData(Name, role, table)
}

// simulation is the ping family's part of a spec's [simulation] table.
type simulation struct {
	// Participants is how many participants to simulate when the spec has no [roles].
	Participants int `toml:"participants"`
}

// PrepareSimulation is protocol.Simulator's PrepareSimulation.
func (family) PrepareSimulation(raw map[string]any, roles protocol.Assignment, _ Params) (protocol.Prepared, error) {
	var s simulation
	if err := protocol.DecodeTable("simulation", raw, &s); err != nil {
		return protocol.Prepared{}, err
	}
	if len(roles.Roles) > 0 {
		if s.Participants != 0 && s.Participants != roles.Count(RoleParticipant) {
			return protocol.Prepared{}, fmt.Errorf("simulation.participants: %d disagrees with the %d names of roles.participant", s.Participants, roles.Count(RoleParticipant))
		}
		return protocol.Prepared{Assignment: roles}, nil
	}
	if s.Participants == 0 {
		return protocol.Prepared{}, fmt.Errorf("simulation: give [roles] participant = [...] or simulation.participants")
	}
	if s.Participants < 2 || s.Participants > MaxParticipants {
		return protocol.Prepared{}, fmt.Errorf("simulation.participants: %d is out of range [2, %d]", s.Participants, MaxParticipants)
	}
	names := make([]string, s.Participants)
	for i := range names {
		names[i] = fmt.Sprintf("node%d", i+1)
	}
	return protocol.Prepared{Assignment: protocol.Assignment{Roles: map[string][]string{RoleParticipant: names}}}, nil
}

// NewRole is protocol.Family's NewRole.
func (family) NewRole(cfg protocol.RoleConfig, p Params) (protocol.Role, error) {
	if cfg.Self.Role != RoleParticipant {
		return nil, fmt.Errorf("ping has no role %q", cfg.Self.Role)
	}
	return newParticipant(cfg, p), nil
}

// Matrix is the result of a ping session: round-trip times in microseconds,
// Median[i][j] being what participant i measured to participant j (0 on the
// diagonal).
type Matrix struct {
	Participants []string    `json:"participants"`
	Count        int         `json:"count"`
	MinMicros    [][]float64 `json:"min_us"`
	MedianMicros [][]float64 `json:"median_us"`
	P99Micros    [][]float64 `json:"p99_us"`
	MaxMicros    [][]float64 `json:"max_us"`
}

// Combine is protocol.Family's Combine: it assembles the participants' rows into
// the latency matrix, validating every row.
func (family) Combine(a protocol.Assignment, p Params, reports map[protocol.Party][]byte) (Matrix, error) {
	names := a.Roles[RoleParticipant]
	n := len(names)
	m := Matrix{Participants: names, Count: p.Count,
		MinMicros: square(n), MedianMicros: square(n), P99Micros: square(n), MaxMicros: square(n)}
	for i := range n {
		self := protocol.Party{Role: RoleParticipant, Index: i}
		raw, ok := reports[self]
		if !ok {
			return Matrix{}, fmt.Errorf("no report from %s (%s)", self, names[i])
		}
		var rep pingpb.Report
		if err := proto.Unmarshal(raw, &rep); err != nil {
			return Matrix{}, fmt.Errorf("report of %s (%s): %w", self, names[i], err)
		}
		if len(rep.Rows) != n-1 {
			return Matrix{}, fmt.Errorf("report of %s (%s): %d rows, want %d", self, names[i], len(rep.Rows), n-1)
		}
		seen := make([]bool, n)
		for _, row := range rep.Rows {
			j := int(row.Peer)
			switch {
			case j >= n || j == i || seen[j]:
				return Matrix{}, fmt.Errorf("report of %s (%s): bad or repeated peer index %d", self, names[i], row.Peer)
			case int(row.Samples) != p.Count:
				return Matrix{}, fmt.Errorf("report of %s (%s): %d samples for peer %d, want %d", self, names[i], row.Samples, j, p.Count)
			case row.MinNs < 0 || row.MinNs > row.MedianNs || row.MedianNs > row.P99Ns || row.P99Ns > row.MaxNs:
				return Matrix{}, fmt.Errorf("report of %s (%s): inconsistent times for peer %d", self, names[i], j)
			}
			seen[j] = true
			m.MinMicros[i][j] = micros(row.MinNs)
			m.MedianMicros[i][j] = micros(row.MedianNs)
			m.P99Micros[i][j] = micros(row.P99Ns)
			m.MaxMicros[i][j] = micros(row.MaxNs)
		}
	}
	return m, nil
}

func square(n int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, n)
	}
	return out
}

func micros(ns int64) float64 { return float64(ns) / 1e3 }

// quantile returns the nearest-rank q-quantile of sorted samples.
func quantile(sorted []int64, q float64) int64 {
	rank := int(q*float64(len(sorted))+0.999999999) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}

func summarize(peer int, samples []int64) *pingpb.Row {
	s := append([]int64(nil), samples...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return &pingpb.Row{Peer: uint32(peer), Samples: uint32(len(s)), MinNs: s[0],
		MedianNs: quantile(s, 0.5), P99Ns: quantile(s, 0.99), MaxNs: s[len(s)-1]}
}
