package mpc

import "math"

// Fixed is the fixed-point encoding of reals in Z/2^64: x is stored as the
// two's-complement integer round(x·2^Frac).
type Fixed struct {
	Frac uint // fractional bits L
}

// Encode returns the ring element of x.
func (f Fixed) Encode(x float64) uint64 {
	return uint64(int64(math.Round(math.Ldexp(x, int(f.Frac)))))
}

// Decode returns the real that v encodes.
func (f Fixed) Decode(v uint64) float64 { return math.Ldexp(float64(int64(v)), -int(f.Frac)) }

// One is the encoding of 1.
func (f Fixed) One() uint64 { return 1 << f.Frac }

// EncodeAll encodes xs.
func (f Fixed) EncodeAll(xs []float64) []uint64 {
	out := make([]uint64, len(xs))
	for i, x := range xs {
		out[i] = f.Encode(x)
	}
	return out
}

// DecodeAll decodes vs.
func (f Fixed) DecodeAll(vs []uint64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = f.Decode(v)
	}
	return out
}
