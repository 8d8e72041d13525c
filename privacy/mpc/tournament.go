package mpc

import "math/bits"

// tournamentRounds returns the rounds of ArgMaxOr with TreeTournament for
// n > 1 values and two parties: 8 a level of ⌈log₂ n⌉ (a comparison, its
// bit made arithmetic, the winner chosen) and one for the exploration.
func tournamentRounds(n int) int { return 8*bits.Len(uint(n-1)) + 1 }

// candidate is a contender of the tournament: the share of its key and of
// its one-hot vector, which is zero outside the arms of its subtree.
type candidate struct {
	key  uint64
	arms []int    // the arms of its subtree, in order
	oh   []uint64 // shares of the one-hot on arms; nil: the public e_arms[0]
}

// argMaxTournament is ArgMaxOr with TreeTournament: the keys
// k_a = x_a·2^b + γ_a (keyDiffs') meet in pairs, level by level, the odd
// one out passing to the next level; a pair's comparison bit
// c = [k_left < k_right] (MSBMerged), made arithmetic (B2A), chooses the
// winner's key k_left + c·(k_right − k_left) and one-hot — (1 − c)·o_left
// on the left's arms beside c·o_right on the right's, the two subtrees'
// arms being disjoint — by one product of the opened c with the opened
// differences and one-hots (MulScalar; at the first level the one-hots are
// public and need none). n − 1 comparisons where the all-pairs argmax
// makes n(n − 1)/2, for 8 rounds a level instead of the AND tree's one or
// two. The keys are distinct, so the winner is the all-pairs argmax's,
// exactly. The exploration comes last: (1 − y)·o + y·z, 1 − y dealt and
// multiplied with the opened one-hot (one round), y·z dealt.
func (e *Engine) argMaxTournament(x, gamma []uint64, alt func(z []uint64) uint64, out *[]uint64) *Proc {
	n := len(x)
	b := TieBits(n)
	cands := make([]candidate, n)
	for a := range n {
		cands[a] = candidate{key: x[a]<<b + gamma[a], arms: []int{a}}
	}
	var lt, c []uint64
	var oc, ov []*Open
	p := e.NewProc()
	for range bits.Len(uint(n - 1)) {
		p.Then(Later(func() *Proc {
			diffs := make([]uint64, len(cands)/2)
			for k := range diffs {
				diffs[k] = cands[2*k].key - cands[2*k+1].key
			}
			return e.MSBMerged(diffs, &lt) // [k_left < k_right]
		}), Later(func() *Proc {
			return e.B2A(lt, &c)
		}), func() bool {
			oc, ov = make([]*Open, len(c)), make([]*Open, len(c))
			for k := range c {
				l, r := cands[2*k], cands[2*k+1]
				v := append(make([]uint64, 0, 1+len(l.oh)+len(r.oh)), r.key-l.key)
				v = append(append(v, l.oh...), r.oh...)
				oc[k], ov[k] = e.Mask(c[k:k+1]), e.Mask(v)
			}
			return true
		}, func() bool {
			one := e.Public([]uint64{1})[0] // this party's share of 1
			next := make([]candidate, 0, (len(cands)+1)/2)
			for k := range c {
				l, r := cands[2*k], cands[2*k+1]
				prod := e.MulScalar(oc[k], ov[k]) // c·(k_r − k_l), c·o_l, c·o_r
				w := candidate{key: l.key + prod[0], arms: append(append([]int{}, l.arms...), r.arms...)}
				w.oh = make([]uint64, 0, len(w.arms))
				if l.oh == nil { // 1 − c
					w.oh = append(w.oh, one-c[k])
				} else {
					for i, v := range l.oh {
						w.oh = append(w.oh, v-prod[1+i])
					}
				}
				if r.oh == nil { // c
					w.oh = append(w.oh, c[k])
				} else {
					w.oh = append(w.oh, prod[1+len(l.oh):]...)
				}
				next = append(next, w)
			}
			if len(cands)%2 == 1 {
				next = append(next, cands[len(cands)-1])
			}
			cands = next
			return true
		})
	}
	var ow, oo *Open
	var yz []uint64
	p.Then(func() bool {
		var y uint64
		var z []uint64
		w := e.Dealt(1, func(dst []uint64) {
			z = make([]uint64, n)
			y = alt(z)
			dst[0] = 1 - y
		})
		yz = e.Dealt(n, func(dst []uint64) {
			for i := range dst {
				dst[i] = y * z[i]
			}
		})
		o := make([]uint64, n)
		for i, a := range cands[0].arms {
			o[a] = cands[0].oh[i]
		}
		ow, oo = e.Mask(w), e.Mask(o)
		return true
	}, func() bool {
		*out = Add(e.MulScalar(ow, oo), yz)
		return true
	})
	return p
}
