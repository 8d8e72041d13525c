package mpc

// maxTreeWordsPerRow bounds the dealer's words of ArgMaxOr's AND tree, per
// row (arm), for TreeFewestRounds: it takes the fewest rounds whose
// products of many factors (many.go) stay within it. 2^10 words (8 KiB) a
// row keeps one round for up to 11 arms and the dealer's words of the tree
// below the rest of an mpccb step's; a round saved is not worth megabytes
// from the dealer.
const maxTreeWordsPerRow = 1 << 10

// maxFanIn bounds the factors of one product in ArgMaxOr's tree: the dealer
// deals 2^f words for each.
const maxFanIn = 10

// Tree is how ArgMaxOr's AND tree trades rounds for the dealer's words: a
// product of f factors costs the dealer 2^f words and a level a round.
type Tree int

const (
	// TreeFewestRounds takes the fewest levels whose words stay within
	// maxTreeWordsPerRow a row: one round for up to 11 arms (5,120 words
	// at 10 arms). For a step that waits on every round.
	TreeFewestRounds Tree = iota
	// TreeFewestWords takes the fan-in with the fewest words, the fewer
	// levels on a tie: at 10 arms two levels of 3 (32 words a row, one
	// round more). For argmaxes run side by side in a batch, whose rounds
	// the batch shares and whose words it does not.
	TreeFewestWords
	// TreeTournament is no AND tree: the keys meet in pairs, level by
	// level (argMaxTournament) — n − 1 comparisons instead of
	// n(n − 1)/2, for 8 rounds a level of ⌈log₂ n⌉ (33 at 10 arms,
	// against TreeFewestWords' 8). The fewest words for both the dealer
	// and the parties: at 10 arms a row costs about a quarter of
	// TreeFewestWords'. For argmaxes run side by side in large batches.
	TreeTournament
)

// treeFanIns returns the fan-in of each level of an AND tree reducing rows
// of width bits each to one, as shape asks. TreeFewestRounds: the fewest
// levels L whose fan-in f (the smallest with f^L ≥ width) keeps the
// dealer's words (rows · groups · 2^f, summed over the levels) within
// rows · maxTreeWordsPerRow. TreeFewestWords: the fan-in f in 2..maxFanIn,
// every level f, with the fewest words.
func treeFanIns(rows, width int, shape Tree) []int {
	if width <= 1 {
		return []int{1}
	}
	levels := func(f int) (fs []int, words int) {
		for w := width; w > 1; {
			groups := (w + f - 1) / f
			words += rows * groups << f
			fs = append(fs, f)
			w = groups
		}
		return fs, words
	}
	if shape == TreeFewestWords {
		var best []int
		bestWords := 0
		for f := 2; f <= min(maxFanIn, width); f++ {
			fs, words := levels(f)
			if best == nil || words < bestWords || (words == bestWords && len(fs) < len(best)) {
				best, bestWords = fs, words
			}
		}
		return best
	}
	for L := 1; ; L++ {
		f := 2
		for pow(f, L) < width {
			f++
		}
		if f > maxFanIn {
			continue
		}
		fs, words := levels(f)
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
// that treeFanIns picks for tree (TreeFewestRounds: one round for n ≤ 11;
// TreeFewestWords: at 10 arms two levels of 3, 32 words a row against
// 512), the last level arithmetic, so no B2A follows; the dealer folds
// 1 − y into the last level's products and deals y·z. Rounds for two
// parties: 6 + the tree's levels, 7 for up to 11 arms with
// TreeFewestRounds (ArgMax: 7 + ⌈log₂(n−1)⌉ + 1, and one more for an
// ε-greedy choice on its input).
//
// ε-greedy uses it with y the exploration coin and z the one-hot of the
// argmax of the exploration scores, which the dealer, who draws them,
// computes in the clear: the result equals ArgMax of s + y(v − s).
func (e *Engine) ArgMaxOr(x, gamma []uint64, tree Tree, alt func(z []uint64) uint64, out *[]uint64) *Proc {
	n := len(x)
	if n == 1 {
		return e.NewProc(func() bool {
			*out = e.Public([]uint64{1})
			return true
		})
	}
	if tree == TreeTournament {
		return e.argMaxTournament(x, gamma, alt, out)
	}
	diffs := keyDiffs(x, gamma)
	var lt []uint64
	p := e.NewProc()
	p.Then(Run(e.MSBMerged(diffs, &lt)))
	fanins := treeFanIns(n, n-1, tree)
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
