package experiment

import (
	"math"
	"slices"
)

// Summary is the mean of a sample and its 95% confidence interval.
type Summary struct {
	N         int
	Mean      float64
	Low, High float64
	StdDev    float64
}

// tQuantile975 holds Student's t 0.975 quantiles for 1..30 degrees of freedom.
var tQuantile975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// Summarize returns the mean of xs with a 95% Student-t interval.
func Summarize(xs []float64) Summary {
	n := len(xs)
	if n == 0 {
		return Summary{}
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n == 1 {
		return Summary{N: 1, Mean: mean, Low: mean, High: mean}
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	t := 1.96
	if n-1 <= len(tQuantile975) {
		t = tQuantile975[n-2]
	}
	half := t * sd / math.Sqrt(float64(n))
	return Summary{N: n, Mean: mean, Low: mean - half, High: mean + half, StdDev: sd}
}

// Compare says how two summaries' means compare beyond their noise: 1
// when a's 95 % interval lies wholly above b's, −1 when wholly below, 0
// when the intervals overlap or either summary has fewer than two runs (a
// single run has no spread to judge by): the order is not resolved.
func Compare(a, b Summary) int {
	switch {
	case a.N < 2 || b.N < 2:
		return 0
	case a.Low > b.High:
		return 1
	case a.High < b.Low:
		return -1
	}
	return 0
}

// Ordered is the verdict of "a > b" beyond noise, as a Claim builds it:
// true and resolved when Compare says 1, false and resolved when −1,
// unresolved otherwise.
func Ordered(a, b Summary) (holds, resolved bool) {
	switch Compare(a, b) {
	case 1:
		return true, true
	case -1:
		return false, true
	}
	return false, false
}

// Rising is the verdict of "xs[0] < xs[1] < … " beyond noise, as a Claim
// takes it: it holds when every next mean lies above the one before it
// beyond both 95 % intervals (Compare), does not hold when one lies below
// beyond them, and is unresolved otherwise.
func Rising(xs ...Summary) (holds, unresolved bool) {
	for i := 1; i < len(xs); i++ {
		switch Compare(xs[i], xs[i-1]) {
		case -1:
			return false, false
		case 0:
			unresolved = true
		}
	}
	return !unresolved, unresolved
}

// WithinNoiseOfLine says whether the least-squares line through the
// points' means (y = intercept + slope·x) passes within every point's 95 %
// interval: the points' departure from a line is then no larger than their
// runs' noise. It is false when a point has fewer than two runs (no spread
// to judge by) or the xs do not vary.
func WithinNoiseOfLine(xs []float64, ys []Summary) bool {
	n := float64(len(xs))
	if len(xs) < 2 || len(ys) != len(xs) {
		return false
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i].Mean
	}
	mx /= n
	my /= n
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i].Mean - my)
	}
	if sxx == 0 {
		return false
	}
	slope := sxy / sxx
	for i, y := range ys {
		fit := my + slope*(xs[i]-mx)
		if y.N < 2 || fit < y.Low || fit > y.High {
			return false
		}
	}
	return true
}

// BatchSizes are the batch sizes a batch comparison runs: 1 (the
// sequential algorithm, its baseline) and the given ones, in order, each
// once.
func BatchSizes(bs []int) []int {
	out := append([]int{1}, bs...)
	slices.Sort(out)
	return slices.Compact(out)
}
