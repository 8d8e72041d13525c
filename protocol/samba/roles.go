package samba

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/bandit-node/bandit-node/privacy"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
	"google.golang.org/protobuf/proto"
)

// Role names.
const (
	RoleCustomer   = "data_customer"
	RoleController = "controller"
	RoleComp       = "comp"
	RoleOwner      = "data_owner"
)

var (
	customerParty   = protocol.Party{Role: RoleCustomer}
	controllerParty = protocol.Party{Role: RoleController}
	compParty       = protocol.Party{Role: RoleComp}
)

// base is what every SAMBA role shares: its config, outgoing batch and the
// costs it counts for the session's result.
type base struct {
	outbox // the outgoing batch

	cfg      protocol.RoleConfig
	p        Params
	alg      Algorithm
	k        int
	finished bool
	rep      *sambapb.Report
}

func newBase(cfg protocol.RoleConfig, p Params) (base, error) {
	alg, err := AlgorithmByName(p.Algorithm)
	if err != nil {
		return base{}, err
	}
	return base{cfg: cfg, p: p, alg: alg, k: cfg.Assignment.Count(RoleOwner), rep: &sambapb.Report{}}, nil
}

func (b *base) send(to protocol.Party, m *sambapb.Message) {
	body, err := proto.Marshal(m)
	if err != nil {
		// Our own message always marshals (a peer's bytes it carries are
		// only bytes fields): a broken invariant, not peer input.
		panic(fmt.Sprintf("samba: marshaling a message: %v", err))
	}
	b.rep.MessagesSent++
	b.rep.BytesSent += int64(len(body))
	b.Send(protocol.Message{To: to, Body: body})
}

// sendBody queues a message already encoded (see wire.go). body must not be
// written to afterwards: the driver may still hold it.
func (b *base) sendBody(to protocol.Party, body []byte) {
	b.rep.MessagesSent++
	b.rep.BytesSent += int64(len(body))
	b.Send(protocol.Message{To: to, Body: body})
}

func (b *base) finish(local any) {
	if b.finished {
		return
	}
	b.finished = true
	body, err := proto.Marshal(b.rep)
	if err != nil {
		// Our own report always marshals: a broken invariant, not peer input.
		panic(fmt.Sprintf("samba: marshaling a report: %v", err))
	}
	b.SetResult(protocol.Result{Report: body, Local: local})
}

// batchChunk is how many messages a slab of Ready batches holds.
const batchChunk = 64

// Tick implements protocol.Role: SAMBA is driven by its messages alone
// (which Family.Info's MessageDriven tells its drivers, so that they need not tick).
func (b *base) Tick() error { return nil }

// timed runs f and adds its duration on the role's clock to the busy time
// the role reports (wall time in the daemon). A simulated role's clock is
// virtual and stands still during a call, so there is nothing to add; the
// simulator measures each role's wall time itself.
func (b *base) timed(f func() error) error {
	if b.cfg.Simulated {
		return f()
	}
	start := b.cfg.Clock.Now()
	err := f()
	b.rep.BusyNs += b.cfg.Clock.Now().Sub(start).Nanoseconds()
	return err
}

// decodeStep decodes m in place if it is one of the messages sent every step
// in the form proto.Marshal writes (see inbound.parse); otherwise the role
// decodes it with decode.
func (in *inbound) decodeStep(m protocol.Message) bool { return !m.Topic && in.parse(m.Body) }

// nonceBuffer is how many bytes of randomness a role reads at a time for its
// envelopes' nonces: one read of crypto/rand serves 341 of them.
const nonceBuffer = 4092

// decode parses a message and checks that it comes from one of the parties
// allowed to send it.
func decode(m protocol.Message) (*sambapb.Message, error) {
	if m.Topic {
		return nil, fmt.Errorf("unexpected topic message from %s", m.From)
	}
	var msg sambapb.Message
	if err := proto.Unmarshal(m.Body, &msg); err != nil {
		return nil, fmt.Errorf("decoding a message from %s: %w", m.From, err)
	}
	return &msg, nil
}

// stream reads a 32-byte key from r and returns a ChaCha8 generator seeded
// with it: each role's decisions (rewards, Thompson draws, permutations,
// probability matching) come from such a stream, seeded from crypto/rand in
// a real session, so that the standard algorithm can replay them exactly
// from a simulation's seed (Theorem 2).
func stream(r io.Reader) (*rand.ChaCha8, error) {
	var key [32]byte
	if _, err := io.ReadFull(r, key[:]); err != nil {
		return nil, fmt.Errorf("reading randomness: %w", err)
	}
	return rand.NewChaCha8(key), nil
}

// putFloat writes a score as decodeFloat reads it: 8 bytes, big-endian IEEE 754.
func putFloat(b *[8]byte, v float64) { binary.BigEndian.PutUint64(b[:], math.Float64bits(v)) }

func decodeFloat(b []byte) (float64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("a score of %d bytes, want 8", len(b))
	}
	v := math.Float64frombits(binary.BigEndian.Uint64(b))
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("a score that is not a finite number")
	}
	return v, nil
}

// Envelope keys by epoch. AES-GCM with random 96-bit nonces may seal at
// most 2³² messages under one key (NIST SP 800-38D, §8.3: beyond that a
// repeated nonce, which reveals the XOR of two plaintexts and the
// authentication key, becomes likelier than 2⁻³²). Each of the two channels
// between the data owners and comp is shared by all K data owners (comp must
// not learn whose score is whose), so one key would carry K·L envelopes a
// step and K·N·L in a session: 2·10¹¹ ≈ 2^37.5 at the validated maximum
// (K = 1,000, N = 10⁸, L = 2). Instead each epoch of 2^keyEpochBits steps has
// its own key, derived from the key comp hands out, so that one key carries
// at most MaxOwners × maxIterations × 2^16 ≈ 1.3·10⁸ < 2²⁷ envelopes
// (TestEnvelopesPerKey). Both sides derive an epoch's channels once, when
// the first step of the epoch comes: a data owner at most every 65,536
// steps, not every step. The envelopes' wire format is unchanged; the step
// in their associated data names the epoch. A batch (params.batch > 1) is
// sealed whole in the epoch of its first step, so a key carries at most
// MaxBatch − 1 steps of the next epoch more: under 2²⁷ still.
const keyEpochBits = 16

// maxIterations bounds the iterations L of a step of every algorithm.
const maxIterations = 2

// keyEpoch is the key epoch of step t.
func keyEpoch(t uint64) uint64 { return t >> keyEpochBits }

// epochDomain starts the derivation of an epoch's key, which is
// HKDF-SHA256-Expand of the session's envelope key over this string and the
// epoch, big-endian.
const epochDomain = "bandit-node/samba/envelope-epoch/v1"

// channels returns the two envelope channels between the data owners and
// comp in session for key epoch epoch: owner → comp (the scores) and
// comp → owner (the bits). An envelope opens only on its channel, for the
// step and iteration it was sealed for, so a replayed, reordered or
// misrouted one fails. The channels are those of roles, not parties: comp
// must not learn which data owner sealed a score.
func channels(key privacy.EnvelopeKey, session string, epoch uint64) (toComp, toOwner *privacy.Channel, err error) {
	info := binary.BigEndian.AppendUint64([]byte(epochDomain), epoch)
	k, err := hkdf.Expand(sha256.New, key[:], string(info), len(key))
	if err != nil {
		return nil, nil, fmt.Errorf("the envelope key of steps %d to %d: %w", epoch<<keyEpochBits, (epoch+1)<<keyEpochBits-1, err)
	}
	env, err := privacy.NewEnvelope(privacy.EnvelopeKey(k))
	if err != nil {
		return nil, nil, err
	}
	if toComp, err = env.Channel(session, RoleOwner, RoleComp); err != nil {
		return nil, nil, err
	}
	if toOwner, err = env.Channel(session, RoleComp, RoleOwner); err != nil {
		return nil, nil, err
	}
	return toComp, toOwner, nil
}

// publicKey decodes the data customer's Paillier public key and checks that
// its modulus has the session's params.paillier_bits, the size every party
// agreed to (a node's policy may set a minimum): a data customer that sent
// a smaller key would have the data owners' sums encrypted under a key
// weaker than they accepted.
func (b *base) publicKey(n []byte) (*privacy.PublicKey, error) {
	pk, err := privacy.UnmarshalPublicKey(n)
	if err != nil {
		return nil, fmt.Errorf("the data customer's public key: %w", err)
	}
	if got := pk.N.BitLen(); got != b.p.PaillierBits {
		return nil, fmt.Errorf("the data customer's public key has a %d-bit modulus, but the session's params.paillier_bits is %d", got, b.p.PaillierBits)
	}
	return pk, nil
}
