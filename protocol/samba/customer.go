package samba

import (
	"fmt"

	"github.com/bandit-node/bandit-node/privacy"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
)

// customer is the data customer DC (Figure 6(d)): it generates the Paillier
// key pair, hands out the public key, and decrypts E(Σ s_i), the cumulative
// reward — the only thing it learns.
type customer struct {
	base
	sk *privacy.PrivateKey
}

func newCustomer(cfg protocol.RoleConfig, p Params) (*customer, error) {
	b, err := newBase(cfg, p)
	if err != nil {
		return nil, err
	}
	sk, err := privacy.GenerateKey(cfg.Rand, b.p.PaillierBits)
	if err != nil {
		return nil, fmt.Errorf("generating the Paillier key pair: %w", err)
	}
	return &customer{base: b, sk: sk}, nil
}

// Start distributes the public key to the controller and the data owners.
func (c *customer) Start() error {
	pub, err := c.sk.PublicKey.MarshalBinary()
	if err != nil {
		return err
	}
	c.send(controllerParty, &sambapb.Message{Kind: &sambapb.Message_PublicKey{PublicKey: &sambapb.PublicKey{N: pub}}})
	for i := range c.k {
		c.send(protocol.Party{Role: RoleOwner, Index: i}, &sambapb.Message{Kind: &sambapb.Message_PublicKey{PublicKey: &sambapb.PublicKey{N: pub}}})
	}
	return nil
}

// Step decrypts the cumulative reward.
func (c *customer) Step(m protocol.Message) error {
	return c.timed(func() error { return c.step(m) })
}

func (c *customer) step(m protocol.Message) error {
	msg, err := decode(m)
	if err != nil {
		return err
	}
	t := msg.GetTotal()
	if m.From != controllerParty || t == nil || c.finished {
		return fmt.Errorf("%s sent the data customer something other than the encrypted total", m.From)
	}
	ct, err := c.sk.PublicKey.ParseCiphertext(t.C)
	if err != nil {
		return fmt.Errorf("the encrypted total: %w", err)
	}
	sum, err := c.sk.Decrypt(ct)
	if err != nil {
		return fmt.Errorf("decrypting the total: %w", err)
	}
	c.rep.PaillierOps++
	if !sum.IsInt64() || sum.Int64() < 0 || sum.Int64() > c.p.Budget {
		// Not the value: the reason may reach every party.
		return fmt.Errorf("the decrypted cumulative reward is not in [0, budget]")
	}
	c.rep.HasReward = true
	c.rep.CumulativeReward = sum.Int64()
	c.finish(CustomerOutcome{CumulativeReward: sum.Int64()})
	return nil
}

// CustomerOutcome is what the data customer keeps: the cumulative reward.
type CustomerOutcome struct {
	CumulativeReward int64 `json:"cumulative_reward"`
}
