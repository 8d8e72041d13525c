package mpccb

import (
	"fmt"
	"io"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/privacy/mpc"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
)

// checkpoints is how many points of the reward curve p″ reports.
const checkpoints = 100

// receiver is p″: it holds every context's reward row (the realised reward
// of every arm), secret-shares each row to the feature parties, at most
// Window steps ahead, and adds up their shares of r_t.
type receiver struct {
	base
	p       Params
	parties int
	fx      mpc.Fixed
	rows    [][]float64
	rand    io.Reader
	sent    uint64
	next    uint64
	shares  map[uint64][]*uint64
	total   float64
	curve   []float64
	every   int64
}

// ReceiverLocal is p″'s own result.
type ReceiverLocal struct {
	Steps         int64   `json:"steps"`
	TotalReward   float64 `json:"total_reward"`
	AverageReward float64 `json:"average_reward"`
}

func newReceiver(cfg protocol.RoleConfig, p Params) (*receiver, error) {
	r := &receiver{p: p, parties: cfg.Assignment.Count(RoleFeature), fx: mpc.Fixed{Frac: uint(p.PrecisionBits)},
		rand: cfg.Rand, next: 1, shares: map[uint64][]*uint64{}, every: max(1, p.Steps/checkpoints)}
	source := "the rewards"
	switch l := cfg.Local.(type) {
	case *RewardLocal:
		r.rows = l.Rows
	case *rewardConfig:
		source = l.Rewards
		rows, err := dataset.ReadRewards(l.Rewards, p.Arms)
		if err != nil {
			return nil, fmt.Errorf("reading the rewards: %w", err)
		}
		r.rows = rows
	default:
		return nil, fmt.Errorf("the reward receiver needs its rewards (local data of type %T)", cfg.Local)
	}
	if int64(len(r.rows)) < p.Steps {
		return nil, fmt.Errorf("the rewards cover %d contexts; the session needs %d steps", len(r.rows), p.Steps)
	}
	bound := p.maxReward()
	for i, row := range r.rows[:p.Steps] {
		if len(row) != p.Arms {
			return nil, fmt.Errorf("reward row %d has %d arms; the session has %d", i+1, len(row), p.Arms)
		}
		for _, v := range row {
			if !(v >= -bound && v <= bound) {
				return nil, fmt.Errorf("%s, row %d: the reward %v is outside [−%.4g, %.4g], the range in which the engine's products stay within its ring at precision_bits = %d over %d steps; scale the rewards or use fewer precision bits",
					source, i+1, v, bound, bound, p.PrecisionBits, p.Steps)
			}
		}
	}
	return r, nil
}

// Start implements protocol.Role.
func (r *receiver) Start() error { return r.shareRows() }

// shareRows secret-shares the rows up to Window steps ahead: uniformly random
// shares for parties 1…P−1 (crypto/rand in a real session), the rest for
// party 0.
func (r *receiver) shareRows() error {
	for r.sent < uint64(r.p.Steps) && r.sent < r.next-1+uint64(r.p.Window) {
		row := r.fx.EncodeAll(r.rows[r.sent])
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
	}
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
		r.SetProgress(protocol.Progress{Step: int64(r.next), Total: r.p.Steps})
		if r.next == uint64(r.p.Steps) {
			n := float64(r.p.Steps)
			r.SetResult(protocol.Result{
				Report: encodeReport(report{Steps: r.p.Steps, RewardTotal: r.total, RewardCurve: r.curve, CheckpointEvery: r.every}),
				Local:  ReceiverLocal{Steps: r.p.Steps, TotalReward: r.total, AverageReward: r.total / n},
			})
			return nil
		}
		r.next++
		if err := r.shareRows(); err != nil {
			return err
		}
	}
}

// check decodes r_t and verifies that it is the reward of some arm in the
// step's row: the parties select it exactly, by a 0/1 vector.
func (r *receiver) check(sum uint64) (float64, error) {
	for _, v := range r.rows[r.next-1] {
		if r.fx.Encode(v) == sum {
			return v, nil
		}
	}
	return 0, fmt.Errorf("the parties opened the reward %g, which no arm pays in this context", r.fx.Decode(sum))
}
