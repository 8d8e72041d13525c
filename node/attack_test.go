package node

import (
	"context"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	dto "github.com/prometheus/client_model/go"
)

// TestForgedAndMalformedFramesAreRejected: frames from address-book peers that
// are outside a session, that impersonate another party, or that are garbage
// are dropped with a logged reason; the session and the daemon go on.
func TestForgedAndMalformedFramesAreRejected(t *testing.T) {
	nodes := startNetwork(t, 3, nil)
	id, err := nodes[0].StartSession(pingSpec(ping.MaxCount, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the session to run", func() bool {
		rec, err := nodes[0].sessionRecord(id)
		return err == nil && rec.Session.Progress.Step > 0
	})
	target := nodes[0].ID()
	send := func(from *testNode, control bool, frame []byte) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m := from.roleMessenger(t, "ping")
		if control {
			m = from.rt.ControlMessenger()
		}
		if err := m.Send(ctx, target, frame); err != nil {
			t.Fatal(err)
		}
	}
	rejected := func() float64 { return counterValue(t, nodes[0].metrics.Errors.WithLabelValues("rejected")) }
	decode := func() float64 { return counterValue(t, nodes[0].metrics.Errors.WithLabelValues("decode")) }

	// node3 is in the address book but not in the session.
	send(nodes[2], false, marshal(t, &nodepb.RoleFrame{SessionId: id, FromRole: "participant", FromIndex: 1, ToRole: "participant", ToIndex: 0, Body: []byte{1}}))
	// node2 plays participant[1] but claims to be participant[0].
	send(nodes[1], false, marshal(t, &nodepb.RoleFrame{SessionId: id, FromRole: "participant", FromIndex: 0, ToRole: "participant", ToIndex: 0, Body: []byte{1}}))
	// A control frame from outside the session: an abort node3 may not give.
	send(nodes[2], true, marshal(t, &nodepb.Control{SessionId: id, Body: &nodepb.Control_Abort{Abort: &nodepb.Abort{Reason: "forged"}}}))
	// node2 names parties the session does not have: an index past the
	// role's, a role it does not have, a recipient node1 does not play.
	send(nodes[1], false, marshal(t, &nodepb.RoleFrame{SessionId: id, FromRole: "participant", FromIndex: 1, ToRole: "participant", ToIndex: 7, Body: []byte{1}}))
	send(nodes[1], false, marshal(t, &nodepb.RoleFrame{SessionId: id, FromRole: "participant", FromIndex: 1 << 31, ToRole: "participant", ToIndex: 0, Body: []byte{1}}))
	send(nodes[1], false, marshal(t, &nodepb.RoleFrame{SessionId: id, FromRole: "nobody", FromIndex: 1, ToRole: "participant", ToIndex: 0, Body: []byte{1}}))
	send(nodes[1], false, marshal(t, &nodepb.RoleFrame{SessionId: id, FromRole: "participant", FromIndex: 1, ToRole: "participant", ToIndex: 1, Body: []byte{1}}))
	testutil.WaitFor(t, 5*time.Second, "seven rejections", func() bool { return rejected() >= 7 })

	send(nodes[2], true, []byte{0x0a, 0xff, 0xff, 0xff})
	send(nodes[2], false, []byte("not a protobuf"))
	testutil.WaitFor(t, 5*time.Second, "two decode errors", func() bool { return decode() >= 2 })

	rec, err := nodes[0].sessionRecord(id)
	if err != nil || rec.Session.State != stateRunning {
		t.Fatalf("the session did not survive forged frames: %+v, %v", rec.Session, err)
	}
	before := rec.Session.Progress.Step
	testutil.WaitFor(t, 5*time.Second, "the session to keep progressing", func() bool {
		rec, err := nodes[0].sessionRecord(id)
		return err == nil && rec.Session.Progress.Step > before
	})
}

// counterValue reads a Prometheus counter.
func counterValue(t *testing.T, c interface{ Write(*dto.Metric) error }) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
