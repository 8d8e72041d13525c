package ping

import (
	"fmt"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping/pingpb"
	"google.golang.org/protobuf/proto"
)

// participant is the state machine of one participant. Towards every other
// participant it keeps exactly one Ping outstanding until it has Count samples;
// it answers every Ping it receives. It finishes when it has its own samples
// and has answered Count Pings from every other participant, so no peer ever
// waits on a finished participant.
type participant struct {
	protocol.Outbox // what Ready hands the driver

	cfg    protocol.RoleConfig
	params Params
	n      int

	sentAt   []time.Time // per peer: when the outstanding Ping left
	samples  [][]int64   // per peer: round-trip times in ns
	answered []int       // per peer: Pings answered

	finished bool
}

func newParticipant(cfg protocol.RoleConfig, p Params) *participant {
	n := cfg.Assignment.Count(RoleParticipant)
	return &participant{cfg: cfg, params: p, n: n,
		sentAt: make([]time.Time, n), samples: make([][]int64, n), answered: make([]int, n)}
}

func (r *participant) peers() []int {
	out := make([]int, 0, r.n-1)
	for j := range r.n {
		if j != r.cfg.Self.Index {
			out = append(out, j)
		}
	}
	return out
}

// Start sends the first Ping to every other participant.
func (r *participant) Start() error {
	for _, j := range r.peers() {
		r.sendPing(j)
	}
	r.progress()
	return nil
}

// Step handles a Ping or a Pong from another participant.
func (r *participant) Step(m protocol.Message) error {
	if r.finished {
		return nil
	}
	j := m.From.Index
	if m.From.Role != RoleParticipant || j < 0 || j >= r.n || j == r.cfg.Self.Index {
		return fmt.Errorf("message from %s, which is not another participant", m.From)
	}
	if m.Topic {
		return fmt.Errorf("unexpected topic message from %s", m.From)
	}
	var msg pingpb.Message
	if err := proto.Unmarshal(m.Body, &msg); err != nil {
		return fmt.Errorf("decoding message from %s: %w", m.From, err)
	}
	switch k := msg.Kind.(type) {
	case *pingpb.Message_Ping:
		return r.stepPing(j, k.Ping)
	case *pingpb.Message_Pong:
		return r.stepPong(j, k.Pong)
	default:
		return fmt.Errorf("message from %s has no known kind", m.From)
	}
}

func (r *participant) stepPing(j int, p *pingpb.Ping) error {
	if int(p.Seq) != r.answered[j] || r.answered[j] >= r.params.Count {
		return fmt.Errorf("ping %d from participant[%d]: want sequence number %d of %d", p.Seq, j, r.answered[j], r.params.Count)
	}
	r.answered[j]++
	r.send(j, &pingpb.Message{Kind: &pingpb.Message_Pong{Pong: &pingpb.Pong{Seq: p.Seq}}})
	r.checkDone()
	return nil
}

func (r *participant) stepPong(j int, p *pingpb.Pong) error {
	if r.sentAt[j].IsZero() || int(p.Seq) != len(r.samples[j]) {
		return fmt.Errorf("pong %d from participant[%d] answers no outstanding ping", p.Seq, j)
	}
	r.samples[j] = append(r.samples[j], r.cfg.Clock.Now().Sub(r.sentAt[j]).Nanoseconds())
	r.sentAt[j] = time.Time{}
	if len(r.samples[j]) < r.params.Count {
		r.sendPing(j)
	}
	r.progress()
	r.checkDone()
	return nil
}

// Tick does nothing: liveness is the driver's concern.
func (r *participant) Tick() error { return nil }

func (r *participant) sendPing(j int) {
	r.sentAt[j] = r.cfg.Clock.Now()
	r.send(j, &pingpb.Message{Kind: &pingpb.Message_Ping{Ping: &pingpb.Ping{Seq: uint32(len(r.samples[j]))}}})
}

func (r *participant) send(j int, msg *pingpb.Message) {
	body, err := proto.Marshal(msg)
	if err != nil {
		// Our own message of sequence numbers always marshals: a broken
		// invariant, not peer input.
		panic(fmt.Sprintf("ping: marshaling a message: %v", err))
	}
	r.Send(protocol.Message{
		From: r.cfg.Self, To: protocol.Party{Role: RoleParticipant, Index: j}, Body: body})
}

func (r *participant) progress() {
	var done int64
	for _, s := range r.samples {
		done += int64(len(s))
	}
	r.SetProgress(protocol.Progress{Step: done, Total: int64(r.params.Count) * int64(r.n-1)})
}

func (r *participant) checkDone() {
	for _, j := range r.peers() {
		if len(r.samples[j]) < r.params.Count || r.answered[j] < r.params.Count {
			return
		}
	}
	rep := &pingpb.Report{}
	for _, j := range r.peers() {
		rep.Rows = append(rep.Rows, summarize(j, r.samples[j]))
	}
	body, err := proto.Marshal(rep)
	if err != nil {
		// Our own report always marshals: a broken invariant, not peer input.
		panic(fmt.Sprintf("ping: marshaling a report: %v", err))
	}
	r.finished = true
	r.SetResult(protocol.Result{Report: body})
}
