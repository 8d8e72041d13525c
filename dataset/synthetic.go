package dataset

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// The paper's synthetic many-arm variant (section 5, "we construct a K-means
// clustering of the dataset and set |A| = K").
const (
	// Sigma is the Gaussian kernel's width σ; the paper sets σ = 1/2.
	Sigma = 0.5
	// MaxArms is the largest number of arms (clusters) the synthetic variant
	// builds, the paper's largest |A|.
	MaxArms = 100
	// MaxLloydIterations caps k-means' Lloyd iterations.
	MaxLloydIterations = 50
)

// Clustering is the result of KMeans.
type Clustering struct {
	// Centres holds the k cluster centres c_a.
	Centres [][]float64
	// Assign holds, for every row, the index of its nearest centre.
	Assign []int
	// Iterations is the number of Lloyd iterations run.
	Iterations int
	// Converged tells whether the last iteration changed no assignment
	// (false: MaxLloydIterations was reached first).
	Converged bool
}

// KMeans clusters the rows of x into k clusters, deterministically from
// seed: k-means++ seeding (Arthur and Vassilvitskii, 2007) drawn from a
// math/rand/v2 ChaCha8 stream keyed by seed, then Lloyd iterations until no
// assignment changes or MaxLloydIterations have run. A row ties to the
// lowest-indexed nearest centre. A cluster left without rows keeps its
// previous centre. Each assignment step computes all row–centre dot
// products as one BLAS matrix product. All rows must have the same, positive length; 1 ≤ k ≤
// len(x).
func KMeans(x [][]float64, k int, seed uint64) (*Clustering, error) {
	n := len(x)
	if n == 0 {
		return nil, fmt.Errorf("k-means: no rows to cluster")
	}
	if k < 1 || k > n {
		return nil, fmt.Errorf("k-means: %d clusters asked of %d rows; want 1..%d", k, n, n)
	}
	d := len(x[0])
	if d == 0 {
		return nil, fmt.Errorf("k-means: rows have no columns")
	}
	for i, row := range x {
		if len(row) != d {
			return nil, fmt.Errorf("k-means: row %d has %d columns, row 0 has %d", i, len(row), d)
		}
	}
	rng := rand.New(rand.NewChaCha8(seedKey(seed, "dataset/kmeans++")))

	// k-means++: the first centre uniformly, each next one with probability
	// proportional to a row's squared distance to its nearest chosen centre.
	centres := make([][]float64, k)
	centres[0] = append([]float64(nil), x[rng.IntN(n)]...)
	nearest := make([]float64, n)
	for i, row := range x {
		nearest[i] = sqDist(row, centres[0])
	}
	for c := 1; c < k; c++ {
		var total float64
		for _, v := range nearest {
			total += v
		}
		pick := rng.IntN(n) // every row coincides with a centre: any will do
		if total > 0 {
			u := rng.Float64() * total
			pick = n - 1 // guards against rounding in the running sum
			for i, v := range nearest {
				if u < v {
					pick = i
					break
				}
				u -= v
			}
		}
		centres[c] = append([]float64(nil), x[pick]...)
		for i, row := range x {
			nearest[i] = min(nearest[i], sqDist(row, centres[c]))
		}
	}

	cl := &Clustering{Centres: centres, Assign: make([]int, n)}
	for i := range cl.Assign {
		cl.Assign[i] = -1
	}
	// The assignment step finds, for each row x, the centre c minimising
	// ‖x − c‖² = ‖x‖² − 2 x·c + ‖c‖², i.e. ‖c‖² − 2 x·c: all the dot
	// products at once are one BLAS matrix product (rows × centresᵀ).
	xs := mat.NewDense(n, d, nil)
	for i, row := range x {
		copy(xs.RawRowView(i), row)
	}
	ct := mat.NewDense(d, k, nil) // centresᵀ
	norms := make([]float64, k)
	var dots mat.Dense
	sums := make([]float64, k*d)
	counts := make([]int, k)
	for cl.Iterations < MaxLloydIterations {
		cl.Iterations++
		for a, c := range centres {
			ct.SetCol(a, c)
			norms[a] = floats64Dot(c, c)
		}
		dots.Mul(xs, ct)
		changed := false
		for i := range n {
			g := dots.RawRowView(i)
			best, bestD := 0, math.Inf(1)
			for a, na := range norms {
				if v := na - 2*g[a]; v < bestD {
					best, bestD = a, v
				}
			}
			if best != cl.Assign[i] {
				cl.Assign[i] = best
				changed = true
			}
		}
		if !changed {
			cl.Converged = true
			break
		}
		clear(sums)
		clear(counts)
		for i, row := range x {
			a := cl.Assign[i]
			counts[a]++
			s := sums[a*d : (a+1)*d]
			for j, v := range row {
				s[j] += v
			}
		}
		for a, c := range centres {
			if counts[a] == 0 {
				continue
			}
			for j := range c {
				c[j] = sums[a*d+j] / float64(counts[a])
			}
		}
	}
	return cl, nil
}

// sqDist returns ‖a − b‖² for equally long a and b.
func sqDist(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for j, v := range a {
		t := v - b[j]
		s += t * t
	}
	return s
}

// ArmMeans returns the synthetic variant's reward means for context x:
//
//	ν_a(x) = exp(−‖c_a − x‖² / (2σ²)) / Σ_b exp(−‖c_b − x‖² / (2σ²)),
//
// one per centre c_a. The paper writes only ν_a ∝ exp(−‖c_a − x‖²/(2σ²));
// we normalise over the arms so that Σ_a ν_a(x) = 1, which makes every ν_a a
// probability (reward r_a ~ Bernoulli(ν_a)) whatever the number of arms and
// leaves the ranking of the arms, and so the best arm, unchanged. The
// exponents are shifted by the smallest distance before exponentiating, so
// no term underflows to a zero sum.
func ArmMeans(centres [][]float64, x []float64, sigma float64) []float64 {
	nu := make([]float64, len(centres))
	dmin := math.Inf(1)
	for a, c := range centres {
		nu[a] = sqDist(x, c)
		dmin = min(dmin, nu[a])
	}
	var sum float64
	for a, d := range nu {
		nu[a] = math.Exp(-(d - dmin) / (2 * sigma * sigma))
		sum += nu[a]
	}
	for a := range nu {
		nu[a] /= sum
	}
	return nu
}

// Means returns ArmMeans(centres, x, sigma) for every context x in xs.
func Means(centres, xs [][]float64, sigma float64) [][]float64 {
	nu := make([][]float64, len(xs))
	for i, x := range xs {
		nu[i] = ArmMeans(centres, x, sigma)
	}
	return nu
}

// DrawRewards draws the realised reward of every arm for every context:
// row i, column a is 1 with probability means[i][a] and 0 otherwise, drawn
// from a math/rand/v2 ChaCha8 stream keyed by seed, context by context and
// arm by arm. Every arm is drawn even though the learner uses only the
// pulled one, so the rewards do not depend on the learner, and the first T
// rows are the same whatever the number of rows drawn.
func DrawRewards(means [][]float64, seed uint64) [][]float64 {
	rng := rand.New(rand.NewChaCha8(seedKey(seed, "dataset/rewards")))
	rewards := make([][]float64, len(means))
	for i, nu := range means {
		row := make([]float64, len(nu))
		for a, p := range nu {
			if rng.Float64() < p {
				row[a] = 1
			}
		}
		rewards[i] = row
	}
	return rewards
}

// seedKey turns a seed and a purpose into a ChaCha8 key: the seed
// little-endian in the first 8 bytes, the purpose after it, so that the
// streams of different purposes from one seed are independent.
func seedKey(seed uint64, purpose string) [32]byte {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:8], seed)
	copy(key[8:], purpose)
	return key
}
