package mpc

// maxTreeWordsPerRow bounds the dealer's words of ArgMaxOr's AND tree, per
// row (arm): it takes the fewest rounds whose products of many factors
// (many.go) stay within it. 2^10 words (8 KiB) a row keeps one round for up
// to 11 arms and the dealer's words of the tree below the rest of an mpccb
// step's; a round saved is not worth megabytes from the dealer.
const maxTreeWordsPerRow = 1 << 10

// maxFanIn bounds the factors of one product in ArgMaxOr's tree: the dealer
// deals 2^f words for each.
const maxFanIn = 10

// treeFanIns returns the fan-in of each level of an AND tree reducing rows
// of width bits each to one: the fewest levels L whose fan-in f (the
// smallest with f^L ≥ width) keeps the dealer's words (rows · groups ·
// 2^f, summed over the levels) within rows · maxTreeWordsPerRow.
func treeFanIns(rows, width int) []int {
	if width <= 1 {
		return []int{1}
	}
	for L := 1; ; L++ {
		f := 2
		for pow(f, L) < width {
			f++
		}
		if f > maxFanIn {
			continue
		}
		words, w := 0, width
		var fs []int
		for w > 1 {
			groups := (w + f - 1) / f
			words += rows * groups << f
			fs = append(fs, f)
			w = groups
		}
		if words <= rows*maxTreeWordsPerRow || f == 2 {
			return fs
		}
	}
}

func pow(b, n int) int {
	r := 1
	for range n {
		r *= b
	}
	return r
}

// ArgMaxOr returns a Proc computing arithmetic shares of
//
//	(1 − y)·onehot(argmax x) + y·z,
//
// where y ∈ {0, 1} and the one-hot z are the dealer's: alt, called on the
// dealer only, fills z and returns y. It is ArgMax (the same keys x·2^b +
// γ, the same pairwise comparisons in one batch, their signs by MSBMerged,
// a round shorter than MSB) with the AND of each row's
// n − 1 comparison bits computed by products of many factors (many.go)
// instead of a tree of two-input ANDs: ⌈log_f(n−1)⌉ rounds for the fan-in f
// that treeFanIns picks (one round for n ≤ 11), the last level
// arithmetic, so no B2A follows; the dealer folds 1 − y into the last
// level's products and deals y·z. Rounds for two parties: 6 + 1 for up to
// 11 arms (ArgMax: 7 + ⌈log₂(n−1)⌉ + 1, and one more for an ε-greedy
// choice on its input).
//
// ε-greedy uses it with y the exploration coin and z the one-hot of the
// argmax of the exploration scores, which the dealer, who draws them,
// computes in the clear: the result equals ArgMax of s + y(v − s).
func (e *Engine) ArgMaxOr(x, gamma []uint64, alt func(z []uint64) uint64, out *[]uint64) *Proc {
	n := len(x)
	if n == 1 {
		return e.NewProc(func() bool {
			*out = e.Public([]uint64{1})
			return true
		})
	}
	diffs := keyDiffs(x, gamma)
	var lt []uint64
	p := e.NewProc()
	p.Then(Run(e.MSBMerged(diffs, &lt)))
	fanins := treeFanIns(n, n-1)
	var (
		level int
		m     *Many
		vals  []uint64 // the current level's inputs, row after row
		width int
	)
	// groupsOf splits every row of width inputs into groups of f.
	groupsOf := func(f int) [][]int {
		var gs [][]int
		for r := range n {
			for k := 0; k < width; k += f {
				var g []int
				for j := k; j < min(k+f, width); j++ {
					g = append(g, r*width+j)
				}
				gs = append(gs, g)
			}
		}
		return gs
	}
	p.Then(func() bool {
		last := level == len(fanins)-1
		if m == nil {
			// rows: "i beats j" for every j ≠ i, as bits.
			rows := make([][]uint64, n)
			k := 0
			for i := range n {
				for j := i + 1; j < n; j++ {
					rows[i] = append(rows[i], e.NotBit(lt[k : k+1])[0]) // k_i > k_j
					rows[j] = append(rows[j], lt[k])
					k++
				}
			}
			width = n - 1
			for _, r := range rows {
				vals = append(vals, r...)
			}
			m = e.AndManyStart(vals, groupsOf(fanins[0]))
			return false
		}
		if !last {
			vals = e.ManyResult(m, nil)
			width = (width + fanins[level] - 1) / fanins[level]
			level++
			m = e.MulManyStart(vals, groupsOf(fanins[level]))
			return false
		}
		var y uint64
		var z, yz []uint64
		res := e.ManyResult(m, func(f []uint64) {
			z = make([]uint64, n)
			y = alt(z)
			for i := range f {
				f[i] = 1 - y
			}
		})
		yz = e.Dealt(n, func(dst []uint64) {
			for i := range dst {
				dst[i] = y * z[i]
			}
		})
		*out = Add(res, yz)
		return true
	})
	return p
}
