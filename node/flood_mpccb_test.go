package node

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
	"google.golang.org/protobuf/proto"
)

// pausingFamily is mpccb whose feature party stops sending, in sessions of
// pauseSteps steps, once it has done pauseAt steps: the other feature party
// then waits at a known step, as behind a slow peer. A feature party's
// progress is Activity only (p′ alone reports steps): the contexts its
// environment answered (pauseSteps of them, all before step 1) and the
// steps it ended, the joint range check (step 0) included.
type pausingFamily struct {
	mpccb.Family
	pauseSteps, pauseAt int64
}

func (f pausingFamily) NewRole(cfg protocol.RoleConfig) (protocol.Role, error) {
	r, err := f.Family.NewRole(cfg)
	if err != nil || cfg.Self.Role != mpccb.RoleFeature || cfg.Params.(mpccb.Params).Steps != f.pauseSteps {
		return r, err
	}
	return &pausingRole{Role: r, pauseAt: f.pauseSteps + 1 + f.pauseAt}, nil
}

type pausingRole struct {
	protocol.Role
	pauseAt int64 // the activity at which it pauses
	paused  bool
}

// Answer passes the environment's answers on (the role asks its contexts).
func (r *pausingRole) Answer(o protocol.Outcome) error { return r.Role.(protocol.Asker).Answer(o) }

func (r *pausingRole) Ready() protocol.Ready {
	rd := r.Role.Ready()
	if rd.Progress != nil && rd.Progress.Activity >= r.pauseAt {
		r.paused = true
	}
	if r.paused {
		rd.Messages = nil
	}
	return rd
}

// TestMPCCBRoundFlood: an allowed organisation that plays feature party 0
// of an mpccb session floods the victim, feature party 1, with well-formed
// payloads for rounds no step has (128 MiB of them) while the victim waits
// for it at a known step. The victim must abort that session with the
// reason, its heap must not grow by anything like the flood, and a second
// session between the same daemons must complete. Before the bound, a
// feature party buffered every round number of its current and next step:
// the session stalled with the flood in memory.
func TestMPCCBRoundFlood(t *testing.T) {
	const (
		arms, dims   = 4, 6
		longSteps    = 5000 // still running when the flood comes
		shortSteps   = 40
		floodFrames  = 256
		frameWords   = 64 << 10 // 512 KiB a frame
		floodBytes   = floodFrames * frameWords * 8
		maxHeapGrowt = floodBytes / 4
		pauseAt      = 3
	)
	contexts, rewards := linearProblem(longSteps, arms, dims, 11)
	nodes := startNetworkWith(t, 5, mpccbLocals(t, contexts, rewards), func(i int) []protocol.Family {
		if i == 0 {
			return []protocol.Family{pausingFamily{Family: mpccb.NewFamily(), pauseSteps: longSteps, pauseAt: pauseAt}}
		}
		return nil
	})
	spec := func(steps int) []byte {
		return fmt.Appendf(nil, "protocol = \"mpccb\"\n[roles]\nfeature_party = [\"node1\", \"node2\"]\narm_puller = \"node3\"\nreward_receiver = \"node4\"\ndealer = \"node5\"\n[params]\nsteps = %d\narms = %d\ndimensions = %d\nepsilon = 0.2\n", steps, arms, dims)
	}
	attacked, err := nodes[0].StartSession(spec(longSteps))
	if err != nil {
		t.Fatal(err)
	}
	victim := nodes[1]
	// The victim's activity, as pausingFamily's: pauseAt steps ended.
	testutil.WaitFor(t, 30*time.Second, "the victim to wait for feature party 0", func() bool {
		rec, err := victim.sessionRecord(attacked)
		return err == nil && rec.Session.Progress.Activity >= longSteps+1+pauseAt
	})
	other, err := nodes[0].StartSession(spec(shortSteps))
	if err != nil {
		t.Fatal(err)
	}

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc

	// node1 plays feature_party[0]: its frames pass the daemon's checks of
	// who may send what, and reach the victim's role.
	words := make([]uint64, frameWords)
	for i := range words {
		words[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	step := uint64(pauseAt + 1) // the step the victim waits in
	received := victim.roleMessenger(t, mpccb.Name).Stats().FramesReceived
	for k := range floodFrames {
		body, err := proto.Marshal(&mpccbpb.Message{Kind: &mpccbpb.Message_Round{Round: &mpccbpb.Round{
			Step: step + uint64(k%2), Round: 1000 + uint32(k), Arith: words}}})
		if err != nil {
			t.Fatal(err)
		}
		frame := marshal(t, &nodepb.RoleFrame{SessionId: attacked, FromRole: mpccb.RoleFeature, FromIndex: 0,
			ToRole: mpccb.RoleFeature, ToIndex: 1, Body: body})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = nodes[0].roleMessenger(t, mpccb.Name).Send(ctx, victim.ID(), frame)
		cancel()
		if err != nil {
			t.Fatalf("flood frame %d: %v", k, err)
		}
	}

	// The heap is measured once the victim has read the flood, or has
	// ended the session (and then drops what comes after).
	testutil.WaitFor(t, 30*time.Second, "the victim to read the flood", func() bool {
		if victim.roleMessenger(t, mpccb.Name).Stats().FramesReceived >= received+floodFrames {
			return true
		}
		rec, err := victim.sessionRecord(attacked)
		return err == nil && rec.Session.State == stateAborted
	})
	runtime.GC()
	runtime.ReadMemStats(&ms)
	grew := int64(ms.HeapAlloc) - int64(before)
	if grew > maxHeapGrowt {
		t.Errorf("the heap grew by %d MiB during a %d MiB flood; want under %d MiB", grew>>20, floodBytes>>20, maxHeapGrowt>>20)
	}
	t.Logf("heap %d MiB before, %+d MiB after a %d MiB flood", before>>20, grew>>20, floodBytes>>20)

	got := waitEnded(t, victim, attacked, 30*time.Second)
	if got.State != stateAborted || !strings.Contains(got.Detail, "at most one round ahead") || !strings.Contains(got.Reason, "feature_party[0]") {
		t.Errorf("the attacked session ended %s on the victim: %q; want aborted with the reason naming the flooding party", got.State, got.Reason+" / detail: "+got.Detail)
	}
	if s := waitEnded(t, nodes[0], attacked, 30*time.Second); s.State != stateAborted {
		t.Errorf("the attacked session ended %s at its initiator", s.State)
	}
	if s := waitEnded(t, nodes[0], other, 90*time.Second); s.State != stateCompleted {
		t.Errorf("the concurrent session ended %s: %s", s.State, s.Reason)
	} else if pr := s.Progress; pr.Step != shortSteps || pr.Total != shortSteps {
		// p′ alone reports steps: the five organizations' sum reads
		// steps of steps.
		t.Errorf("the concurrent session's progress ends at %d of %d steps; want %d of %d", pr.Step, pr.Total, shortSteps, shortSteps)
	}
}
