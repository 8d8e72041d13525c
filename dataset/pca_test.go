package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// dot returns a·b.
func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestPCAKnownDirections builds data with known principal directions: a
// large spread along v, a smaller one along w ⟂ v, little noise elsewhere.
func TestPCAKnownDirections(t *testing.T) {
	const n, d = 4000, 6
	// v's largest-magnitude entry is negative, so the sign convention must
	// flip the eigensolver's vector if it returns +v.
	v := []float64{0.1, -0.9, 0.3, 0.2, 0.1, 0.2}
	w := []float64{0.7, 0.1, 0.1, 0.2, 0.6, 0.2}
	// Make v a unit vector and w a unit vector orthogonal to it.
	nv := math.Sqrt(dot(v, v))
	for i := range v {
		v[i] /= nv
	}
	p := dot(v, w)
	for i := range w {
		w[i] -= p * v[i]
	}
	nw := math.Sqrt(dot(w, w))
	for i := range w {
		w[i] /= nw
	}
	mean := []float64{5, -1, 0, 2, 3, 0.5}
	r := rand.New(rand.NewPCG(7, 7))
	x := mat.NewDense(n, d, nil)
	for i := range n {
		a, b := 3*r.NormFloat64(), r.NormFloat64()
		row := x.RawRowView(i)
		for j := range row {
			row[j] = mean[j] + a*v[j] + b*w[j] + 0.01*r.NormFloat64()
		}
	}
	pca, err := FitPCA(x, 2)
	if err != nil {
		t.Fatal(err)
	}
	for c, want := range [][]float64{v, w} {
		got := pca.Components.RawRowView(c)
		// The sign convention: the largest-magnitude entry is positive, so
		// fixing the sign again changes nothing.
		fixed := slices.Clone(got)
		if fixSign(fixed); !slices.Equal(fixed, got) {
			t.Errorf("component %d = %v: largest-magnitude entry negative", c, got)
		}
		if cos := math.Abs(dot(got, want)); cos < 0.9999 {
			t.Errorf("component %d = %v, want ±%v (|cos| = %v)", c, got, want, cos)
		}
	}
	if got := pca.Components.RawRowView(0); dot(got, v) > 0 {
		t.Errorf("component 0 = %v has the sign of v = %v, whose largest entry is negative", got, v)
	}
	for c, want := range []float64{9, 1} {
		if got := pca.Variances[c]; math.Abs(got-want) > 0.1*want {
			t.Errorf("variance %d = %v, want about %v", c, got, want)
		}
	}
	for j, m := range mean {
		if math.Abs(pca.Mean[j]-m) > 0.15 {
			t.Errorf("mean[%d] = %v, want about %v", j, pca.Mean[j], m)
		}
	}
}

// TestPCAAgainstNaive checks FitPCA and Project against a naive reference:
// the covariance summed over explicitly centred rows, the same eigensolver,
// and projections computed one dot product at a time. It covers both of
// FitPCA's paths (the d×d covariance and, for n ≤ d, the dual n×n matrix)
// and row counts that are not multiples of the stripes or chunks.
func TestPCAAgainstNaive(t *testing.T) {
	for _, c := range []struct{ n, d, k int }{
		{1, 3, 1},   // n ≤ d, rank 0: the covariance path
		{3, 5, 2},   // n ≤ d, rank 2: the dual path
		{3, 5, 3},   // n ≤ d, rank 2 < k: the covariance path
		{12, 12, 6}, // n = d: the dual path
		{40, 100, 10},
		{37, 4, 4},
		{1031, 12, 5},
	} {
		r := rand.New(rand.NewPCG(uint64(c.n), 1))
		x := mat.NewDense(c.n, c.d, nil)
		for i := range c.n {
			for j := range c.d {
				x.Set(i, j, r.Float64()*float64(j+1))
			}
		}
		pca, err := FitPCA(x, c.k)
		if err != nil {
			t.Fatal(err)
		}

		mean := make([]float64, c.d)
		for i := range c.n {
			for j := range c.d {
				mean[j] += x.At(i, j) / float64(c.n)
			}
		}
		cov := mat.NewSymDense(c.d, nil)
		for a := range c.d {
			for b := a; b < c.d; b++ {
				var s float64
				for i := range c.n {
					s += (x.At(i, a) - mean[a]) * (x.At(i, b) - mean[b])
				}
				cov.SetSym(a, b, s/float64(c.n))
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(cov, true) {
			t.Fatal("reference eigendecomposition failed")
		}
		values := eig.Values(nil)
		var vectors mat.Dense
		eig.VectorsTo(&vectors)

		rows, err := pca.Project(x)
		if err != nil {
			t.Fatal(err)
		}
		for comp := range c.k {
			if want := values[c.d-1-comp]; math.Abs(pca.Variances[comp]-want) > 1e-9*(1+math.Abs(want)) {
				t.Errorf("n=%d d=%d: variance %d = %v, want %v", c.n, c.d, comp, pca.Variances[comp], want)
			}
			if comp >= c.n-1 {
				continue // beyond the rank n−1 of centred rows: eigenvectors of 0 are not unique
			}
			want := mat.Col(nil, c.d-1-comp, &vectors)
			fixSign(want)
			got := pca.Components.RawRowView(comp)
			for j := range got {
				if math.Abs(got[j]-want[j]) > 1e-7 {
					t.Fatalf("n=%d d=%d: component %d = %v, want %v", c.n, c.d, comp, got, want)
				}
			}
			for i := range c.n {
				var p float64
				for j := range c.d {
					p += (x.At(i, j) - mean[j]) * got[j]
				}
				if math.Abs(rows[i][comp]-p) > 1e-9*(1+math.Abs(p)) {
					t.Fatalf("n=%d d=%d: projection of row %d on component %d = %v, want %v", c.n, c.d, i, comp, rows[i][comp], p)
				}
			}
		}
		for i, row := range rows {
			if len(row) != c.k || cap(row) != c.k {
				t.Fatalf("projected row %d has length %d, capacity %d; want %d", i, len(row), cap(row), c.k)
			}
		}
	}
}

func TestPCADeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	x := mat.NewDense(500, 30, nil)
	for i := range 500 {
		for j := range 30 {
			if r.IntN(2) == 0 { // half zeros, like image backgrounds
				x.Set(i, j, r.Float64())
			}
		}
	}
	a, err := FitPCA(x, 20)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b, err := FitPCA(x, 20)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(a.Components, b.Components) || !slices.Equal(a.Variances, b.Variances) || !slices.Equal(a.Mean, b.Mean) {
			t.Fatal("two fits of the same data differ")
		}
	}
}

func TestPCARejects(t *testing.T) {
	x := mat.NewDense(4, 3, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 0, 1})
	for _, c := range []struct {
		k    int
		want string
	}{
		{0, "0 components asked of 3-dimensional data"},
		{4, "4 components asked of 3-dimensional data"},
		{-1, "want 1..3"},
	} {
		if _, err := FitPCA(x, c.k); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("k=%d: error %v, want %q", c.k, err, c.want)
		}
	}
	pca, err := FitPCA(x, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pca.Project(mat.NewDense(2, 4, nil)); err == nil || !strings.Contains(err.Error(), "4-dimensional rows") {
		t.Errorf("projecting 4-dimensional rows: error %v", err)
	}
}

func TestFixSign(t *testing.T) {
	for _, c := range []struct{ in, want []float64 }{
		{[]float64{0.1, -0.9, 0.3}, []float64{-0.1, 0.9, -0.3}},
		{[]float64{0.1, 0.9, -0.3}, []float64{0.1, 0.9, -0.3}},
		{[]float64{-0.5, 0.5}, []float64{0.5, -0.5}}, // a tie: the first decides
		{[]float64{0.5, -0.5}, []float64{0.5, -0.5}},
		{[]float64{0, 0}, []float64{0, 0}},
	} {
		got := slices.Clone(c.in)
		fixSign(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("fixSign(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestNormalizeRows(t *testing.T) {
	for _, c := range []struct {
		name     string
		in, want []float64
	}{
		{"3-4-5", []float64{3, 4}, []float64{0.6, 0.8}},
		{"already unit", []float64{0, -1, 0}, []float64{0, -1, 0}},
		{"zero stays zero", []float64{0, 0, 0}, []float64{0, 0, 0}},
		{"empty", []float64{}, []float64{}},
		{"tiny", []float64{3e-300, 4e-300}, []float64{0.6, 0.8}},
		{"huge", []float64{3e300, -4e300}, []float64{0.6, -0.8}},
	} {
		rows := [][]float64{slices.Clone(c.in)}
		NormalizeRows(rows)
		for j := range c.want {
			if math.Abs(rows[0][j]-c.want[j]) > 1e-15 {
				t.Errorf("%s: NormalizeRows(%v) = %v, want %v", c.name, c.in, rows[0], c.want)
				break
			}
		}
	}
}

// TestContextsFromBytes: the PCA on rows of bytes converted a block at a
// time (fitPCA and projectRows on byteRows, what FashionMNISTContexts runs)
// gives FitPCA's and Project's results on the same rows as float64 values
// to the bit — with fewer rows than columns (the dual), fewer rows than a
// projection chunk, and several chunks whose short last one joins the one
// before or stands alone — and FashionMNISTContexts gives ProjectImages's
// contexts. (On the real training set too: TestContextsFromBytes with
// FASHION_MNIST_BYTES=1, 25 s.)
func TestContextsFromBytes(t *testing.T) {
	for _, c := range []struct{ n, d, k int }{{50, 100, 5}, {300, 100, 20}, {2*projectChunk + 100, 100, 20}, {2*projectChunk + 300, 130, 7}} {
		t.Run(fmt.Sprintf("%dx%d_k%d", c.n, c.d, c.k), func(t *testing.T) {
			data := randomBytes(c.n*c.d, uint64(c.n))
			var scale [256]float64
			for b := range scale {
				scale[b] = float64(b) / 255
			}
			rows := byteRows{data: data, n: c.n, d: c.d, scale: &scale}
			x := mat.NewDense(c.n, c.d, nil)
			for i, b := range data {
				x.RawMatrix().Data[i] = scale[b]
			}
			want, err := FitPCA(x, c.k)
			if err != nil {
				t.Fatal(err)
			}
			got, err := fitPCA(rows, c.k)
			if err != nil {
				t.Fatal(err)
			}
			if !sameBits(got.Mean, want.Mean) || !sameBits(got.Components.RawMatrix().Data, want.Components.RawMatrix().Data) {
				t.Fatal("the PCA fitted on bytes differs from FitPCA's")
			}
			wantX, err := want.Project(x)
			if err != nil {
				t.Fatal(err)
			}
			gotX, err := want.projectRows(rows)
			if err != nil {
				t.Fatal(err)
			}
			for i := range wantX {
				if !sameBits(gotX[i], wantX[i]) {
					t.Fatalf("row %d: %v projected from bytes, %v by Project", i, gotX[i], wantX[i])
				}
			}
		})
	}
	dirs := map[string]string{"80 random images": fakeFashionDir(t, 80, 1)}
	if os.Getenv("FASHION_MNIST_BYTES") != "" {
		dirs["Fashion-MNIST"] = FashionMNISTDir
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			got, err := FashionMNISTContexts(dir)
			if err != nil {
				t.Fatal(err)
			}
			im, labels, err := loadFashionTrain(dir)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ProjectImages(im, labels, PCADims)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.X) != len(want.X) || !slices.Equal(got.Labels, want.Labels) {
				t.Fatalf("%d contexts, want %d (or other labels)", len(got.X), len(want.X))
			}
			for i := range want.X {
				if !sameBits(got.X[i], want.X[i]) {
					t.Fatalf("context %d: %v from bytes, %v from ProjectImages", i, got.X[i], want.X[i])
				}
			}
		})
	}
}

// sameBits reports whether a and b hold the same float64 values to the bit.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}
