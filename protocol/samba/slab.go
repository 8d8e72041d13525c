package samba

// slab hands out slices cut from larger allocations, each capped at its
// length, so that appending to one never writes into the next, and none is
// handed out twice: whoever receives one may keep it as long as it likes. A
// role that sends a small message or two a step then allocates once in
// dozens of steps instead of every step; with a hundred daemons to a core,
// every new allocation is memory no cache holds.
type slab[T any] struct{ free []T }

// cut returns an empty slice with room for n elements, from a slab of chunk
// elements (or an allocation of its own if n exceeds chunk).
func (s *slab[T]) cut(n, chunk int) []T {
	if n > chunk {
		return make([]T, 0, n)
	}
	if len(s.free) < n {
		s.free = make([]T, chunk)
	}
	out := s.free[:0:n]
	s.free = s.free[n:]
	return out
}
