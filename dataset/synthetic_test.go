package dataset

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// blobs returns perBlob points around each centre, Gaussian with standard
// deviation spread, and each point's blob.
func blobs(centres [][]float64, perBlob int, spread float64, seed uint64) (x [][]float64, blob []int) {
	r := rand.New(rand.NewPCG(seed, 2))
	for i := range perBlob * len(centres) {
		b := i % len(centres) // interleaved, so k-means++ sees no order
		p := make([]float64, len(centres[b]))
		for j, c := range centres[b] {
			p[j] = c + spread*r.NormFloat64()
		}
		x = append(x, p)
		blob = append(blob, b)
	}
	return x, blob
}

// TestKMeansRecoversBlobs: on well-separated blobs k-means (with k-means++
// seeding) puts every blob in a cluster of its own, whatever the seed.
func TestKMeansRecoversBlobs(t *testing.T) {
	for _, c := range []struct {
		name    string
		centres [][]float64
	}{
		{"two in 1-D", [][]float64{{-5}, {5}}},
		{"four corners", [][]float64{{0, 0}, {0, 10}, {10, 0}, {10, 10}}},
		{"eight in 20-D", func() [][]float64 {
			var cs [][]float64
			for b := range 8 {
				c := make([]float64, 20)
				c[b] = 10
				c[19-b] -= 10
				cs = append(cs, c)
			}
			return cs
		}()},
	} {
		for seed := range uint64(5) {
			x, blob := blobs(c.centres, 50, 0.5, seed)
			k := len(c.centres)
			cl, err := KMeans(x, k, seed)
			if err != nil {
				t.Fatal(err)
			}
			if !cl.Converged || cl.Iterations > MaxLloydIterations {
				t.Errorf("%s, seed %d: not converged after %d iterations", c.name, seed, cl.Iterations)
			}
			// Blob b maps to one cluster, and distinct blobs to distinct clusters.
			clusterOf := make([]int, k)
			for b := range clusterOf {
				clusterOf[b] = -1
			}
			for i, b := range blob {
				a := cl.Assign[i]
				if clusterOf[b] == -1 {
					clusterOf[b] = a
				} else if clusterOf[b] != a {
					t.Fatalf("%s, seed %d: blob %d split between clusters %d and %d", c.name, seed, b, clusterOf[b], a)
				}
			}
			if distinct := slices.Compact(slices.Sorted(slices.Values(clusterOf))); len(distinct) != k {
				t.Fatalf("%s, seed %d: blobs map to clusters %v", c.name, seed, clusterOf)
			}
			for b, a := range clusterOf {
				if d := math.Sqrt(sqDist(cl.Centres[a], c.centres[b])); d > 0.5 {
					t.Errorf("%s, seed %d: centre of blob %d is %v, %v away from %v", c.name, seed, b, cl.Centres[a], d, c.centres[b])
				}
			}
		}
	}
}

func TestKMeansDeterministic(t *testing.T) {
	x, _ := blobs([][]float64{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}, 200, 0.6, 9)
	a, err := KMeans(x, 7, 42)
	if err != nil {
		t.Fatal(err)
	}
	b, err := KMeans(x, 7, 42)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Assign, b.Assign) || a.Iterations != b.Iterations {
		t.Fatal("two runs from the same seed differ")
	}
	for i := range a.Centres {
		if !slices.Equal(a.Centres[i], b.Centres[i]) {
			t.Fatal("two runs from the same seed give different centres")
		}
	}
	c, err := KMeans(x, 7, 43)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a.Assign, c.Assign) {
		t.Error("seeds 42 and 43 give the same clustering of overlapping blobs")
	}
}

func TestKMeansEdgeCases(t *testing.T) {
	// Fewer distinct points than clusters: no failure, duplicated centres.
	x := [][]float64{{1, 1}, {1, 1}, {2, 2}, {2, 2}}
	cl, err := KMeans(x, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range x {
		if !slices.Equal(cl.Centres[cl.Assign[i]], row) {
			t.Errorf("row %d = %v assigned to centre %v", i, row, cl.Centres[cl.Assign[i]])
		}
	}
	for _, c := range []struct {
		name string
		x    [][]float64
		k    int
		want string
	}{
		{"no rows", nil, 1, "no rows to cluster"},
		{"k too large", x, 5, "5 clusters asked of 4 rows"},
		{"k zero", x, 0, "want 1..4"},
		{"no columns", [][]float64{{}, {}}, 1, "no columns"},
		{"ragged", [][]float64{{1, 2}, {1}}, 1, "row 1 has 1 columns, row 0 has 2"},
	} {
		if _, err := KMeans(c.x, c.k, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestArmMeans checks ν(x): a probability vector, largest for the nearest
// centre, with the ratios of the paper's Gaussian kernel.
func TestArmMeans(t *testing.T) {
	centres := [][]float64{{1, 0}, {0, 1}, {-1, 0}, {0, -1}, {0.6, 0.8}}
	for _, c := range []struct {
		name  string
		x     []float64
		sigma float64
	}{
		{"on a centre", []float64{1, 0}, Sigma},
		{"between", []float64{0.7071, 0.7071}, Sigma},
		{"origin: all equal", []float64{0, 0}, Sigma},
		{"narrow kernel", []float64{0, -1}, 0.01}, // exp(−20000) underflows without the shift
		{"far away", []float64{1000, 1000}, Sigma},
	} {
		nu := ArmMeans(centres, c.x, c.sigma)
		var sum float64
		for _, v := range nu {
			if v < 0 || v > 1 || math.IsNaN(v) {
				t.Fatalf("%s: ν = %v", c.name, nu)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("%s: Σν = %v, want 1", c.name, sum)
		}
		for a := range centres {
			for b := range centres {
				da, db := sqDist(c.x, centres[a]), sqDist(c.x, centres[b])
				want := (db - da) / (2 * c.sigma * c.sigma) // log ν_a − log ν_b
				if nu[a] > 1e-300 && nu[b] > 1e-300 && math.Abs(math.Log(nu[a]/nu[b])-want) > 1e-9*(1+math.Abs(want)) {
					t.Errorf("%s: log(ν_%d/ν_%d) = %v, want %v", c.name, a, b, math.Log(nu[a]/nu[b]), want)
				}
				if da < db && nu[a] < nu[b] {
					t.Errorf("%s: centre %d is nearer than %d but ν = %v", c.name, a, b, nu)
				}
			}
		}
	}
	rows := Means(centres, [][]float64{{1, 0}, {0, 0}}, Sigma)
	if len(rows) != 2 || !slices.Equal(rows[1], ArmMeans(centres, []float64{0, 0}, Sigma)) {
		t.Errorf("Means = %v", rows)
	}
}

func TestDrawRewards(t *testing.T) {
	const n = 20000
	means := make([][]float64, n)
	for i := range means {
		means[i] = []float64{0, 0.1, 0.5, 0.9, 1}
	}
	r := DrawRewards(means, 5)
	sums := make([]float64, 5)
	for _, row := range r {
		for a, v := range row {
			if v != 0 && v != 1 {
				t.Fatalf("reward %v is not 0 or 1", v)
			}
			sums[a] += v
		}
	}
	for a, p := range means[0] {
		freq := sums[a] / n
		if tol := 5 * math.Sqrt(p*(1-p)/n); math.Abs(freq-p) > tol {
			t.Errorf("arm %d: frequency %v, want %v ± %v", a, freq, p, tol)
		}
	}
	// Deterministic from the seed, and a shorter draw is a prefix.
	again := DrawRewards(means[:100], 5)
	for i := range again {
		if !slices.Equal(again[i], r[i]) {
			t.Fatalf("row %d differs between draws from one seed", i)
		}
	}
	other := DrawRewards(means[:100], 6)
	same := true
	for i := range other {
		same = same && slices.Equal(other[i], r[i])
	}
	if same {
		t.Error("seeds 5 and 6 draw the same rewards")
	}
}

func TestSeedKeyDistinct(t *testing.T) {
	if seedKey(1, "a") == seedKey(1, "b") || seedKey(1, "a") == seedKey(2, "a") {
		t.Error("seed keys collide")
	}
}
