package mpccb

import (
	"fmt"
	"io"
	"slices"

	"github.com/bandit-node/bandit-node/privacy/mpc"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
)

// checkpoints is how many points of the reward curve p″ reports.
const checkpoints = 100

// receiver is p″: it asks its environment for the reward every arm would
// pay at each step (protocol.Asker), secret-shares each row to the feature
// parties as it is answered, at most Window steps ahead, and adds up their
// shares of r_t.
type receiver struct {
	base
	p       Params
	parties int
	fx      mpc.Fixed
	rand    io.Reader
	bound   float64     // the largest |reward| the engine's range allows (Params.maxReward)
	asked   uint64      // QueryRewards queries asked (steps 0 to asked−1)
	sent    uint64      // rows answered and shared (steps 1 to sent)
	next    uint64      // the step whose r_t p″ waits for
	rows    [][]float64 // the rows of steps next to sent, kept to check r_t
	shares  map[uint64][]*uint64
	total   float64
	curve   []float64
	every   int64
	// clamped counts the rewards answered beyond [−bound, bound] and
	// clamped into it (Answer); it stays in p″'s own result.
	clamped int64
}

// ReceiverLocal is p″'s own result.
type ReceiverLocal struct {
	Steps         int64   `json:"steps"`
	TotalReward   float64 `json:"total_reward"`
	AverageReward float64 `json:"average_reward"`
	// RewardsClamped counts the rewards p″'s environment answered beyond
	// the engine's range [−R, R] at this session's precision_bits and
	// steps, which p″ clamped into it. Only this organization sees it.
	RewardsClamped int64 `json:"rewards_clamped"`
}

func newReceiver(cfg protocol.RoleConfig, p Params) (*receiver, error) {
	return &receiver{p: p, parties: cfg.Assignment.Count(RoleFeature), fx: mpc.Fixed{Frac: uint(p.PrecisionBits)},
		rand: cfg.Rand, bound: p.maxReward(), next: 1, shares: map[uint64][]*uint64{}, every: max(1, p.Steps/checkpoints)}, nil
}

// Start implements protocol.Role.
func (r *receiver) Start() error {
	r.askRows()
	return nil
}

// rowsAhead bounds the reward queries p″ has asked and not yet had
// answered (within the window): as contextsAhead.
const rowsAhead = 32

// askRows asks the reward rows of the steps up to Window ahead of the step
// whose r_t p″ waits for — just when it would share them — at most
// rowsAhead unanswered. In a batched session the window counts batches:
// Window·B steps ahead, so that the feature parties have every row of the
// batch they begin, and of the next Window − 1.
func (r *receiver) askRows() {
	for r.asked < uint64(r.p.Steps) && r.asked < r.next-1+uint64(r.p.Window)*uint64(r.p.batch()) && r.asked-r.sent < rowsAhead {
		r.asked++
		r.Ask(protocol.Query{ID: r.asked, Kind: protocol.QueryRewards, Step: int64(r.asked) - 1})
	}
}

// Answer implements protocol.Asker: the reward row of the oldest step
// asked — one finite reward per arm — which p″ shares at once. A reward
// beyond [−R, R], the range the engine's products allow at this precision
// over this many steps (Params.maxReward), is clamped into it and counted
// in p″'s own result (ReceiverLocal.RewardsClamped), not refused: R
// follows from precision_bits and steps, which the initiator chooses, and
// an abort would tell every party that a reward of that step was beyond
// it — with a small R, a fact about p″'s private rewards. Clamped, the
// session's traffic is the same whatever the rewards are.
//
// An error here may become the session's abort reason, sent to every
// party: it names the step and the kind of fault, never a reward or an
// arm.
func (r *receiver) Answer(o protocol.Outcome) error {
	t := r.sent // the query's step
	if t >= r.asked || o.ID != t+1 {
		return fmt.Errorf("reward receiver: an answer to query %d, but the oldest query asked and not answered is %d (of %d asked)", o.ID, t+1, r.asked)
	}
	if len(o.Rewards) != r.p.Arms {
		return fmt.Errorf("reward receiver, step %d: %d rewards; the session has %d arms, and p″ needs the reward of every arm", t, len(o.Rewards), r.p.Arms)
	}
	if !isFinite(o.Rewards) {
		return fmt.Errorf("reward receiver, step %d: the environment answered a reward that is not a finite number", t)
	}
	row := slices.Clone(o.Rewards)
	for a, v := range row {
		if c := min(r.bound, max(-r.bound, v)); c != v {
			row[a] = c
			r.clamped++
		}
	}
	r.rows = append(r.rows, row)
	r.SetProgress(protocol.Progress{Activity: r.activity()})
	if err := r.share(row); err != nil {
		return err
	}
	// A batched session's window (Window·B rows) may be more than
	// rowsAhead queries: ask the next as this one is answered.
	r.askRows()
	return nil
}

// activity counts p″'s work for the daemon's stall timeout: rows answered
// and rewards learned. It reports no Step and Total: p′ alone does.
func (r *receiver) activity() int64 { return int64(r.sent+r.next) - 1 }

// share secret-shares the row of step sent+1: uniformly random shares for
// parties 1…P−1 (crypto/rand in a real session), the rest for party 0.
func (r *receiver) share(rewards []float64) error {
	row := r.fx.EncodeAll(rewards)
	buf := make([]byte, 8*len(row))
	for q := r.parties - 1; q >= 0; q-- {
		share := row
		if q > 0 {
			if _, err := io.ReadFull(r.rand, buf); err != nil {
				return fmt.Errorf("drawing reward shares: %w", err)
			}
			share = make([]uint64, len(row))
			for i := range share {
				share[i] = leUint64(buf[8*i:])
				row[i] -= share[i]
			}
		}
		r.send(protocol.Party{Role: RoleFeature, Index: q}, &mpccbpb.Message{Kind: &mpccbpb.Message_RewardRow{
			RewardRow: &mpccbpb.Words{Step: r.sent + 1, Words: share}}})
	}
	r.sent++
	return nil
}

func leUint64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// Step implements protocol.Role.
func (r *receiver) Step(m protocol.Message) error {
	msg, err := decode(m)
	if err != nil {
		return err
	}
	rw, ok := msg.Kind.(*mpccbpb.Message_Reward)
	if !ok || m.From.Role != RoleFeature {
		return fmt.Errorf("p″ takes only reward shares from feature parties, not %T from %s", msg.Kind, m.From)
	}
	st := rw.Reward.Step
	if st < r.next || st > r.sent {
		return fmt.Errorf("an unexpected reward share for step %d from %s at step %d", st, m.From, r.next)
	}
	got := r.shares[st]
	if got == nil {
		got = make([]*uint64, r.parties)
		r.shares[st] = got
	}
	if got[m.From.Index] != nil {
		return fmt.Errorf("a reward share for step %d twice from %s", st, m.From)
	}
	v := rw.Reward.Words[0]
	got[m.From.Index] = &v
	for {
		got := r.shares[r.next]
		if got == nil {
			return nil
		}
		var sum uint64
		for _, s := range got {
			if s == nil {
				return nil
			}
			sum += *s
		}
		rt, err := r.check(sum)
		if err != nil {
			return fmt.Errorf("step %d: %w", r.next, err)
		}
		r.total += rt
		delete(r.shares, r.next)
		if int64(r.next)%r.every == 0 || r.next == uint64(r.p.Steps) {
			r.curve = append(r.curve, r.total/float64(r.next))
		}
		r.rows = r.rows[1:]
		if r.next == uint64(r.p.Steps) {
			n := float64(r.p.Steps)
			r.SetResult(protocol.Result{
				Report: encodeReport(report{Steps: r.p.Steps, RewardTotal: r.total, RewardCurve: r.curve, CheckpointEvery: r.every}),
				Local:  ReceiverLocal{Steps: r.p.Steps, TotalReward: r.total, AverageReward: r.total / n, RewardsClamped: r.clamped},
			})
			return nil
		}
		r.next++
		r.SetProgress(protocol.Progress{Activity: r.activity()})
		r.askRows()
	}
}

// check decodes r_t and verifies that it is the reward of some arm in the
// step's row: the parties select it exactly, by a 0/1 vector.
func (r *receiver) check(sum uint64) (float64, error) {
	for _, v := range r.rows[0] {
		if r.fx.Encode(v) == sum {
			return v, nil
		}
	}
	return 0, fmt.Errorf("the parties opened a reward that no arm pays in this context")
}
