package samba

// pursuit needs two iterations a step (§4.2): the first takes the argmax of
// the empirical means, with which each data owner moves its probability,
// p_i ← p_i + β(1[i is the argmax] − p_i); the second pulls arm i with
// probability p_i.
type pursuit struct{}

func (pursuit) Name() string        { return "pursuit" }
func (pursuit) Iterations() int     { return 2 }
func (pursuit) Matching(l int) bool { return l == 2 }

func (pursuit) ComputeScore(c *ScoreContext) float64 {
	if c.L == 1 {
		return mean(c)
	}
	return c.P
}

func (pursuit) AfterIteration(l int, bit bool, c *ScoreContext) {
	b := 0.0
	if bit {
		b = 1
	}
	c.P = clampProb(c.P + c.Params.Beta*(b-c.P))
}
