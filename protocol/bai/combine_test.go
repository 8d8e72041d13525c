package bai

import (
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai/baipb"
	"google.golang.org/protobuf/proto"
)

func combineReports(coord *baipb.CoordinatorReport, agents ...*baipb.AgentReport) map[protocol.Party][]byte {
	out := map[protocol.Party][]byte{}
	out[coordinatorParty], _ = proto.Marshal(coord)
	for i, r := range agents {
		out[protocol.Party{Role: RoleAgent, Index: i}], _ = proto.Marshal(r)
	}
	return out
}

// TestCombineRefusesArmsOutOfRange: the result never names an arm that is
// not one of the session's K, whatever a report says.
func TestCombineRefusesArmsOutOfRange(t *testing.T) {
	a := protocol.Assignment{Roles: map[string][]string{RoleCoordinator: {"c"}, RoleAgent: {"a", "b"}}}
	ok := &baipb.AgentReport{Stopped: true, LocalBest: 1, Interactions: 5}
	for _, c := range []struct {
		name    string
		alg     string
		reports map[protocol.Party][]byte
		want    string
	}{
		{"best", AlgCorrupted, combineReports(&baipb.CoordinatorReport{Decided: true, Best: 7, Arms: 3}, ok, ok), "best arm 7 of 3"},
		{"eliminated", AlgCorrupted, combineReports(&baipb.CoordinatorReport{Decided: true, Eliminated: []uint32{0, 3}, Best: 1, Arms: 3}, ok, ok), "eliminated arm 3 of 3"},
		{"local best", AlgIndependent, combineReports(&baipb.CoordinatorReport{Arms: 3}, ok, &baipb.AgentReport{Stopped: true, LocalBest: 1 << 31}), "report of agent[1]: best arm 2147483648 of 3"},
	} {
		p := DefaultParams()
		p.Algorithm = c.alg
		if _, err := (Family{}).Combine(a, p, c.reports); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	p := DefaultParams()
	if _, err := (Family{}).Combine(a, p, combineReports(&baipb.CoordinatorReport{Decided: true, Eliminated: []uint32{0, 2}, Best: 1, Arms: 3}, ok, ok)); err != nil {
		t.Errorf("a valid pair of reports: %v", err)
	}
}

// FuzzCombine feeds the initiator's Combine arbitrary reports of the
// coordinator and two agents.
func FuzzCombine(f *testing.F) {
	r := combineReports(&baipb.CoordinatorReport{Decided: true, Eliminated: []uint32{0, 2}, Best: 1, Arms: 3},
		&baipb.AgentReport{Stopped: true, LocalBest: 1, Interactions: 5}, &baipb.AgentReport{Interactions: 9})
	f.Add(r[coordinatorParty], r[protocol.Party{Role: RoleAgent}], r[protocol.Party{Role: RoleAgent, Index: 1}], false)
	f.Add([]byte{0xff}, []byte{}, []byte{0x08, 0x01}, true)
	f.Fuzz(func(t *testing.T, coord, a0, a1 []byte, independent bool) {
		a := protocol.Assignment{Roles: map[string][]string{RoleCoordinator: {"c"}, RoleAgent: {"a", "b"}}}
		p := DefaultParams()
		if independent {
			p.Algorithm = AlgIndependent
		}
		res, err := (Family{}).Combine(a, p, map[protocol.Party][]byte{coordinatorParty: coord,
			{Role: RoleAgent, Index: 0}: a0, {Role: RoleAgent, Index: 1}: a1})
		if err != nil {
			return
		}
		if r := res.(*Result); r.BestArm != nil && (*r.BestArm < 0 || *r.BestArm >= r.K) {
			t.Fatalf("best arm %d of %d", *r.BestArm, r.K)
		}
	})
}
