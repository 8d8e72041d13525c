package samba

import (
	"runtime"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
	"google.golang.org/protobuf/proto"
)

func combineFixture(budget int64) (protocol.Assignment, Params, map[protocol.Party][]byte) {
	a := protocol.Assignment{Roles: map[string][]string{RoleCustomer: {"dc"}, RoleController: {"ctl"}, RoleComp: {"comp"},
		RoleOwner: {"o1", "o2"}}}
	p := DefaultParams()
	p.Budget = budget
	reports := map[protocol.Party][]byte{}
	for _, party := range a.Parties() {
		r := &sambapb.Report{MessagesSent: 3}
		if party.Role == RoleCustomer {
			r.HasReward, r.CumulativeReward = true, 1
		}
		reports[party], _ = proto.Marshal(r)
	}
	return a, p, reports
}

// TestCombineAllocatesByReports: the initiator's Combine allocates by what
// the reports hold, not by the budget: a real session of the largest
// budget (10⁸ steps, no pulls reported) used to reserve 800 MB for the arm
// sequence.
func TestCombineAllocatesByReports(t *testing.T) {
	a, p, reports := combineFixture(MaxBudget)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := (Family{}).Combine(a, p, reports); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("Combine of five small reports allocated %d bytes", n)
	}
}

// FuzzCombine feeds the initiator's Combine an arbitrary report from each
// role.
func FuzzCombine(f *testing.F) {
	_, _, reports := combineFixture(100)
	owner, _ := proto.Marshal(&sambapb.Report{Pulls: []uint64{3, 9, 4}})
	f.Add(reports[customerParty], reports[controllerParty], owner, []byte{0xff})
	f.Fuzz(func(t *testing.T, customer, ctl, o1, o2 []byte) {
		a, p, reports := combineFixture(100)
		reports[customerParty], reports[controllerParty] = customer, ctl
		reports[protocol.Party{Role: RoleOwner, Index: 0}] = o1
		reports[protocol.Party{Role: RoleOwner, Index: 1}] = o2
		res, err := (Family{}).Combine(a, p, reports)
		if err != nil {
			return
		}
		if r := res.(*Result); r.K != 2 {
			t.Fatalf("K = %d", r.K)
		}
	})
}
