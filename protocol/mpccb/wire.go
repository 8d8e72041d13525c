package mpccb

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/bandit-node/bandit-node/privacy/mpc"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
)

// encode marshals m into a message to party to.
func encode(to protocol.Party, m *mpccbpb.Message) protocol.Message {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("mpccb: encoding %T: %v", m.Kind, err)) // a broken invariant: our own message
	}
	return protocol.Message{To: to, Body: b}
}

// decode unmarshals a received message and checks its sizes.
func decode(m protocol.Message) (*mpccbpb.Message, error) {
	var msg mpccbpb.Message
	if err := proto.Unmarshal(m.Body, &msg); err != nil {
		return nil, fmt.Errorf("malformed message: %w", err)
	}
	switch k := msg.Kind.(type) {
	case nil:
		return nil, fmt.Errorf("empty message")
	case *mpccbpb.Message_DealerSeed:
		if len(k.DealerSeed.GetSeed()) != mpc.SeedSize {
			return nil, fmt.Errorf("a seed of %d bytes, want %d", len(k.DealerSeed.GetSeed()), mpc.SeedSize)
		}
	case *mpccbpb.Message_PairSeed:
		if len(k.PairSeed.GetSeed()) != mpc.SeedSize {
			return nil, fmt.Errorf("a seed of %d bytes, want %d", len(k.PairSeed.GetSeed()), mpc.SeedSize)
		}
	case *mpccbpb.Message_Round:
		if n := len(k.Round.Arith) + len(k.Round.Binary); n > maxMessageWords {
			return nil, fmt.Errorf("a round of %d words, more than a message carries (%d)", n, maxMessageWords)
		}
	case *mpccbpb.Message_Corrections:
		if len(k.Corrections.Words) > maxMessageWords {
			return nil, fmt.Errorf("a chunk of %d correction words, more than the dealer sends in one message (%d)", len(k.Corrections.Words), maxMessageWords)
		}
	case *mpccbpb.Message_RewardRow:
		if len(k.RewardRow.Words) > MaxArms {
			return nil, fmt.Errorf("a reward row of %d arms", len(k.RewardRow.Words))
		}
	case *mpccbpb.Message_Arm:
		if len(k.Arm.Words) > MaxArms {
			return nil, fmt.Errorf("an arm vector of %d arms", len(k.Arm.Words))
		}
	case *mpccbpb.Message_Reward:
		if len(k.Reward.Words) != 1 {
			return nil, fmt.Errorf("a reward share of %d words, want 1", len(k.Reward.Words))
		}
	}
	return &msg, nil
}

// seedOf copies a validated seed.
func seedOf(b []byte) mpc.Seed {
	var s mpc.Seed
	copy(s[:], b)
	return s
}

// base is what every role shares: the outbox its Ready empties, and a Tick
// that does nothing.
type base struct{ protocol.Outbox }

// send queues m for to.
func (b *base) send(to protocol.Party, m *mpccbpb.Message) { b.Send(encode(to, m)) }

// Tick implements protocol.Role: the roles wait on messages only; the
// daemon's stall timeout catches a silent peer.
func (b *base) Tick() error { return nil }
