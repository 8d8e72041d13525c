package dataset

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// PCADims is the number of principal components the paper keeps (section 5:
// "the first 20 principal components of the dataset").
const PCADims = 20

// The Gram matrix XᵀX is accumulated over covStripes fixed stripes of rows,
// one goroutine and one accumulator each, and the accumulators are added in
// stripe order: the result depends on neither the number of cores nor
// scheduling. Each stripe feeds BLAS covChunk rows at a time, so that the
// rows one rank-k update sweeps stay in cache.
const (
	covStripes = 4
	covChunk   = 256
)

// PCA is a principal-component projection fitted in plaintext on a training
// matrix (one row per sample).
type PCA struct {
	// Mean is the training rows' mean; projecting subtracts it first.
	Mean []float64
	// Components holds the principal directions as rows (k×d), in
	// decreasing order of variance. Each is a unit vector whose
	// largest-magnitude entry (the first such, on a tie) is positive, which
	// fixes the sign an eigensolver leaves free.
	Components *mat.Dense
	// Variances holds the k largest eigenvalues of the training covariance
	// (normalised by the number of rows n, not n−1), in the same order.
	Variances []float64
}

// FitPCA fits the top k principal components of the rows of x (n×d): it
// computes the rows' mean and their d×d covariance (from the Gram matrix
// XᵀX, accumulated with BLAS rank-k updates), diagonalises the covariance
// with gonum's EigenSym and keeps the eigenvectors of the k largest
// eigenvalues. With no more rows than dimensions it diagonalises the smaller
// n×n matrix of the centred rows' inner products instead (see fitDual). The
// result is deterministic: sums run in a fixed order and each component's
// sign is fixed (see PCA.Components).
func FitPCA(x *mat.Dense, k int) (*PCA, error) { return fitPCA(denseRows{x}, k) }

// rowSource gives fitPCA and projectRows a matrix's rows a block at a time,
// as float64 values: a mat.Dense's own (denseRows), or bytes converted
// block by block (byteRows), so that Fashion-MNIST's 47 million pixels need
// not be held as float64 values (376 MB) at once.
type rowSource interface {
	Dims() (n, d int)
	// buffer returns words for block to convert rows rows into, or nil
	// when the source needs none.
	buffer(rows int) []float64
	// block returns rows lo..hi−1, row-major, converted into buf if the
	// source must convert them.
	block(lo, hi int, buf []float64) blas64.General
	// dense returns the whole matrix.
	dense() *mat.Dense
}

// denseRows is a mat.Dense as a rowSource: its blocks are views.
type denseRows struct{ x *mat.Dense }

func (r denseRows) Dims() (int, int)     { return r.x.Dims() }
func (r denseRows) buffer(int) []float64 { return nil }
func (r denseRows) dense() *mat.Dense    { return r.x }
func (r denseRows) block(lo, hi int, _ []float64) blas64.General {
	raw := r.x.RawMatrix()
	return blas64.General{Rows: hi - lo, Cols: raw.Cols, Stride: raw.Stride, Data: raw.Data[lo*raw.Stride:]}
}

// byteRows is n rows of d bytes, each byte b read as the value scale[b].
type byteRows struct {
	data  []byte
	n, d  int
	scale *[256]float64
}

func (r byteRows) Dims() (int, int)          { return r.n, r.d }
func (r byteRows) buffer(rows int) []float64 { return make([]float64, rows*r.d) }
func (r byteRows) dense() *mat.Dense {
	return mat.NewDense(r.n, r.d, r.block(0, r.n, r.buffer(r.n)).Data)
}
func (r byteRows) block(lo, hi int, buf []float64) blas64.General {
	buf = buf[:(hi-lo)*r.d]
	for i, b := range r.data[lo*r.d : hi*r.d] {
		buf[i] = r.scale[b]
	}
	return blas64.General{Rows: hi - lo, Cols: r.d, Stride: r.d, Data: buf}
}

// fitPCA is FitPCA on a rowSource.
func fitPCA(x rowSource, k int) (*PCA, error) {
	n, d := x.Dims()
	if n < 1 || d < 1 {
		return nil, fmt.Errorf("PCA: empty training matrix (%d×%d)", n, d)
	}
	if k < 1 || k > d {
		return nil, fmt.Errorf("PCA: %d components asked of %d-dimensional data; want 1..%d", k, d, d)
	}

	mean := make([]float64, d)
	buf := x.buffer(covChunk)
	for lo := 0; lo < n; lo += covChunk {
		hi := min(lo+covChunk, n)
		raw := x.block(lo, hi, buf)
		for i := range hi - lo {
			row := raw.Data[i*raw.Stride : i*raw.Stride+d]
			for j, v := range row {
				mean[j] += v
			}
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}

	if n <= d {
		if p, ok := fitDual(x.dense(), mean, k); ok {
			return p, nil
		}
	}

	// cov = XᵀX/n − μμᵀ. Accumulating the uncentred Gram matrix lets the
	// BLAS rank-k update skip zero entries (about half the pixels of a
	// Fashion-MNIST image are background): a third less time than centring
	// first. The subtraction loses about log10(mean²/variance) of the 16
	// significant digits, one or two for pixels in [0, 1].
	stripes := make([]blas64.Symmetric, covStripes)
	var wg sync.WaitGroup
	for s := range stripes {
		stripes[s] = blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: make([]float64, d*d)}
		lo, hi := s*n/covStripes, (s+1)*n/covStripes
		if lo == hi {
			continue
		}
		wg.Go(func() { accumulateGram(stripes[s], x, lo, hi) })
	}
	wg.Wait()
	cov := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			var g float64
			for _, s := range stripes {
				g += s.Data[i*d+j]
			}
			cov.SetSym(i, j, g/float64(n)-mean[i]*mean[j])
		}
	}

	var eig mat.EigenSym
	if !eig.Factorize(cov, true) {
		return nil, fmt.Errorf("PCA: the eigendecomposition of the %d×%d covariance did not converge", d, d)
	}
	values := eig.Values(nil) // ascending
	var vectors mat.Dense
	eig.VectorsTo(&vectors)

	p := &PCA{Mean: mean, Components: mat.NewDense(k, d, nil), Variances: make([]float64, k)}
	for c := range k {
		col := d - 1 - c
		p.Variances[c] = values[col]
		row := p.Components.RawRowView(c)
		mat.Col(row, col, &vectors)
		fixSign(row)
	}
	return p, nil
}

// fitDual fits the PCA through the n×n matrix K = X_c X_cᵀ/n of the centred
// rows X_c when there are no more rows than dimensions (n ≤ d), which is
// much cheaper than the d×d covariance C = X_cᵀ X_c/n: C and K share their
// nonzero eigenvalues, and if K u = λ u with λ > 0 then X_cᵀ u/√(nλ) is a
// unit eigenvector of C for λ. It reports false, leaving the work to the
// covariance, when fewer than k eigenvalues are clearly positive (a rank
// below k leaves components the dual cannot produce).
func fitDual(x *mat.Dense, mean []float64, k int) (*PCA, bool) {
	n, d := x.Dims()
	xc := mat.NewDense(n, d, nil)
	for i := range n {
		src, dst := x.RawRowView(i), xc.RawRowView(i)
		for j, v := range src {
			dst[j] = v - mean[j]
		}
	}
	var gram mat.SymDense
	gram.SymOuterK(1/float64(n), xc)
	var eig mat.EigenSym
	if !eig.Factorize(&gram, true) {
		return nil, false
	}
	values := eig.Values(nil) // ascending
	if k > n || values[n-k] <= 1e-9*values[n-1] || values[n-k] <= 0 {
		return nil, false
	}
	var vectors mat.Dense
	eig.VectorsTo(&vectors)
	p := &PCA{Mean: mean, Components: mat.NewDense(k, d, nil), Variances: make([]float64, k)}
	u := make([]float64, n)
	for c := range k {
		col := n - 1 - c
		p.Variances[c] = values[col]
		mat.Col(u, col, &vectors)
		row := p.Components.RawRowView(c)
		// row = X_cᵀ u, then scaled to unit length (√(nλ) in exact
		// arithmetic).
		blas64.Gemv(blas.Trans, 1, xc.RawMatrix(), blas64.Vector{N: n, Inc: 1, Data: u}, 0, blas64.Vector{N: d, Inc: 1, Data: row})
		norm := blas64.Nrm2(blas64.Vector{N: d, Inc: 1, Data: row})
		for j := range row {
			row[j] /= norm
		}
		fixSign(row)
	}
	return p, true
}

// accumulateGram adds Σ x_i x_iᵀ over rows lo..hi−1 of x to the upper
// triangle of acc.
func accumulateGram(acc blas64.Symmetric, x rowSource, lo, hi int) {
	buf := x.buffer(covChunk)
	for start := lo; start < hi; start += covChunk {
		chunk := x.block(start, start+min(covChunk, hi-start), buf)
		blas64.Syrk(blas.Trans, 1, chunk, 1, acc)
	}
}

// fixSign negates v if its largest-magnitude entry (the first such) is
// negative.
func fixSign(v []float64) {
	best := 0
	for i, x := range v {
		if math.Abs(x) > math.Abs(v[best]) {
			best = i
		}
	}
	if v[best] < 0 {
		for i := range v {
			v[i] = -v[i]
		}
	}
}

// Dims returns the number of components k and the input dimension d.
func (p *PCA) Dims() (k, d int) { return p.Components.Dims() }

// Project returns the coordinates of every row of x (n×d) on the principal
// components, (x_i − Mean)·Components: n rows of k values, all backed by one
// allocation.
func (p *PCA) Project(x *mat.Dense) ([][]float64, error) {
	k, d := p.Dims()
	n, xd := x.Dims()
	if xd != d {
		return nil, fmt.Errorf("PCA: projecting %d-dimensional rows with components fitted on %d dimensions", xd, d)
	}
	var y mat.Dense
	y.Mul(x, p.Components.T())
	// (x − μ)Wᵀ = xWᵀ − μWᵀ: subtract the projected mean from every row.
	offset := make([]float64, k)
	for c := range k {
		offset[c] = floats64Dot(p.Mean, p.Components.RawRowView(c))
	}
	rows := make([][]float64, n)
	for i := range n {
		row := y.RawRowView(i)
		for c := range row {
			row[c] -= offset[c]
		}
		rows[i] = row[:k:k]
	}
	return rows, nil
}

// projectChunk is the rows projectRows projects at a time: a multiple of
// gonum's 64-row blocks and at least four of them, so that every chunk takes
// the path (parallel, one k-block after the other) one product of all the
// rows takes, and the results are the same to the bit.
const projectChunk = 2048

// projectRows is Project on rows of bytes, converted projectChunk rows at
// a time; a last chunk of fewer than 256 rows joins the one before it.
func (p *PCA) projectRows(x byteRows) ([][]float64, error) {
	k, d := p.Dims()
	n, xd := x.Dims()
	if xd != d {
		return nil, fmt.Errorf("PCA: projecting %d-dimensional rows with components fitted on %d dimensions", xd, d)
	}
	offset := make([]float64, k)
	for c := range k {
		offset[c] = floats64Dot(p.Mean, p.Components.RawRowView(c))
	}
	out := make([]float64, n*k)
	rows := make([][]float64, n)
	buf := x.buffer(projectChunk + 256)
	for lo := 0; lo < n; {
		hi := min(lo+projectChunk, n)
		if n-hi < 256 {
			hi = n
		}
		xc := mat.NewDense(hi-lo, d, x.block(lo, hi, buf).Data)
		y := mat.NewDense(hi-lo, k, out[lo*k:hi*k])
		y.Mul(xc, p.Components.T())
		for i := lo; i < hi; i++ {
			row := out[i*k : (i+1)*k : (i+1)*k]
			for c := range row {
				row[c] -= offset[c]
			}
			rows[i] = row
		}
		lo = hi
	}
	return rows, nil
}

// floats64Dot returns the dot product of two equally long vectors.
func floats64Dot(a, b []float64) float64 {
	return blas64.Dot(blas64.Vector{N: len(a), Inc: 1, Data: a}, blas64.Vector{N: len(b), Inc: 1, Data: b})
}

// NormalizeRows scales every row to unit Euclidean (L2) norm in place, as the
// paper does with the projected images (section 5: "normalize each resulting
// vector to have unit length"). A row that is entirely zero has no direction
// and stays zero; after NormalizeRows every row has norm 1 or 0.
func NormalizeRows(rows [][]float64) {
	for _, row := range rows {
		// Nrm2 scales as it sums, so tiny or huge entries neither underflow
		// nor overflow.
		norm := blas64.Nrm2(blas64.Vector{N: len(row), Inc: 1, Data: row})
		if norm == 0 {
			continue
		}
		for j := range row {
			row[j] /= norm
		}
	}
}
