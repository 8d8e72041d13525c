package mpccb

import (
	"fmt"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
)

// puller is p′: it adds up the feature parties' shares of each step's
// one-hot vector, learns a_t and pulls it. It keeps how often it pulled
// each arm, for its own organisation only.
type puller struct {
	base
	p       Params
	parties int
	next    uint64
	ahead   uint64 // how far past next a step's shares may be (pullerAhead)
	shares  map[uint64][][]uint64
	counts  []int64
	arms    []uint16
}

// PullerLocal is p′'s own result: how often it pulled each arm, and the arm
// of every step — what p′ learns, kept for its organisation only.
type PullerLocal struct {
	Pulls []int64  `json:"pulls"`
	Arms  []uint16 `json:"-"` // in memory only: a simulation grades it
}

func newPuller(cfg protocol.RoleConfig, p Params) (*puller, error) {
	parties := cfg.Assignment.Count(RoleFeature)
	return &puller{p: p, parties: parties, next: 1, ahead: pullerAhead(p, parties),
		shares: map[uint64][][]uint64{}, counts: make([]int64, p.Arms)}, nil
}

// maxPullerBuffer bounds the bytes of arm shares p′ keeps for steps it
// cannot open yet.
const maxPullerBuffer = 16 << 20

// pullerAhead is how many steps past the one p′ waits for a feature
// party's arm shares may be. Nothing p′ does paces the feature parties —
// they wait for the dealer and p″, never for p′ — so they may be any
// number of steps past what p′ has opened: one feature party's link to p′
// slower than another's (a busy reader, a connection lost and its frames
// resent) lets the other's shares run ahead of it. The bound is therefore
// not the window but memory: maxPullerBuffer of shares, or the window if
// that is larger. At 10 arms and 2 feature parties that is about 100,000
// steps, minutes of one link's lag; a link that lags longer loses its
// peer first (session.peer_timeout).
//
// In a batched session the window counts batches, and a batch's arm shares
// come together: Window + 1 batches' steps.
func pullerAhead(p Params, parties int) uint64 {
	perStep := 8 * p.Arms * max(parties, 1)
	return max(uint64(p.Window+1)*uint64(p.batch()), uint64(maxPullerBuffer/perStep))
}

// Start implements protocol.Role.
func (u *puller) Start() error { return nil }

// Step implements protocol.Role.
func (u *puller) Step(m protocol.Message) error {
	msg, err := decode(m)
	if err != nil {
		return err
	}
	arm, ok := msg.Kind.(*mpccbpb.Message_Arm)
	if !ok || m.From.Role != RoleFeature {
		return fmt.Errorf("p′ takes only arm shares from feature parties, not %T from %s", msg.Kind, m.From)
	}
	st := arm.Arm.Step
	if st < u.next || st > u.next+u.ahead || st > uint64(u.p.Steps) || len(arm.Arm.Words) != u.p.Arms {
		return fmt.Errorf("unexpected arm shares (step %d, %d arms) from %s at step %d", st, len(arm.Arm.Words), m.From, u.next)
	}
	got := u.shares[st]
	if got == nil {
		got = make([][]uint64, u.parties)
		u.shares[st] = got
	}
	if got[m.From.Index] != nil {
		return fmt.Errorf("arm shares for step %d twice from %s", st, m.From)
	}
	got[m.From.Index] = arm.Arm.Words
	for {
		got := u.shares[u.next]
		for _, s := range got {
			if s == nil {
				return nil
			}
		}
		if got == nil {
			return nil
		}
		a, err := openOneHot(got)
		if err != nil {
			return fmt.Errorf("step %d: %w", u.next, err)
		}
		u.counts[a]++
		u.arms = append(u.arms, uint16(a))
		delete(u.shares, u.next)
		// p′ alone reports Step and Total, the session's steps; the other
		// roles report Activity only, so that the sum over the parties
		// that a daemon shows reads steps of steps (not P + 3 times them).
		u.SetProgress(protocol.Progress{Step: int64(u.next), Total: u.p.Steps})
		if u.next == uint64(u.p.Steps) {
			u.SetResult(protocol.Result{Report: encodeReport(report{Steps: u.p.Steps}), Local: PullerLocal{Pulls: u.counts, Arms: u.arms}})
			return nil
		}
		u.next++
	}
}

// openOneHot adds up shares of a one-hot vector and returns its arm. Its
// errors name no arm: the arm chosen is p′'s alone.
func openOneHot(shares [][]uint64) (int, error) {
	arm := -1
	for a := range shares[0] {
		var v uint64
		for _, s := range shares {
			v += s[a]
		}
		switch v {
		case 0:
		case 1:
			if arm >= 0 {
				return 0, fmt.Errorf("the opened arm vector has more than one 1")
			}
			arm = a
		default:
			return 0, fmt.Errorf("the opened arm vector holds a value other than 0 or 1")
		}
	}
	if arm < 0 {
		return 0, fmt.Errorf("the opened arm vector is all zero")
	}
	return arm, nil
}
