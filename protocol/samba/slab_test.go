package samba

import "testing"

// TestSlabCut: the slices a slab hands out are empty, capped at what was
// asked, and never share storage.
func TestSlabCut(t *testing.T) {
	var s slab[byte]
	var cuts [][]byte
	for i := range 300 {
		n := []int{1, 7, 60, 100, 5000}[i%5]
		c := s.cut(n, 4096)
		if len(c) != 0 || cap(c) != n {
			t.Fatalf("cut(%d): len %d cap %d, want 0 and %d", n, len(c), cap(c), n)
		}
		c = c[:n]
		for j := range c {
			c[j] = byte(i)
		}
		cuts = append(cuts, c)
	}
	for i, c := range cuts {
		for _, v := range c {
			if v != byte(i) {
				t.Fatalf("cut %d was overwritten by another", i)
			}
		}
	}
}
