package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// idxBytes encodes an IDX stream: magic, then each dimension, then data.
func idxBytes(magic uint32, dims []uint32, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, magic)
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return append(b, data...)
}

// gzipBytes compresses b with gzip.
func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeFile writes b to name in dir and returns the path.
func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// randomBytes returns n bytes from a seeded generator.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

func TestReadImagesRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name             string
		count, rows, col int
		gzip             bool
	}{
		{"plain", 5, 3, 4, false},
		{"gzip", 5, 3, 4, true},
		{"one-pixel", 7, 1, 1, false},
		{"empty", 0, 28, 28, true},
		{"largest image", 2, 64, 64, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := randomBytes(c.count*c.rows*c.col, 3)
			if len(data) > 1 {
				data[0], data[1] = 0, 255 // both ends of the scale
			}
			b := idxBytes(MagicImages, []uint32{uint32(c.count), uint32(c.rows), uint32(c.col)}, data)
			if c.gzip {
				b = gzipBytes(t, b)
			}
			im, err := ReadImages(writeFile(t, t.TempDir(), "images", b))
			if err != nil {
				t.Fatal(err)
			}
			if im.Count != c.count || im.Rows != c.rows || im.Cols != c.col || len(im.Pixels) != len(data) {
				t.Fatalf("got %d images of %d×%d (%d pixels), want %d of %d×%d", im.Count, im.Rows, im.Cols, len(im.Pixels), c.count, c.rows, c.col)
			}
			for i, v := range data {
				if want := float64(v) / 255; im.Pixels[i] != want {
					t.Fatalf("pixel %d = %v, want %v", i, im.Pixels[i], want)
				}
			}
			if c.count > 1 {
				d := c.rows * c.col
				if got := im.Image(1); len(got) != d || &got[0] != &im.Pixels[d] {
					t.Errorf("Image(1) is not pixels %d..%d", d, 2*d)
				}
			}
		})
	}
}

func TestReadLabelsRoundTrip(t *testing.T) {
	for _, gz := range []bool{false, true} {
		data := []byte{0, 9, 3, 255, 7}
		b := idxBytes(MagicLabels, []uint32{uint32(len(data))}, data)
		if gz {
			b = gzipBytes(t, b)
		}
		labels, err := ReadLabels(writeFile(t, t.TempDir(), "labels", b))
		if err != nil {
			t.Fatalf("gzip %v: %v", gz, err)
		}
		if len(labels) != len(data) {
			t.Fatalf("gzip %v: %d labels, want %d", gz, len(labels), len(data))
		}
		for i, v := range data {
			if labels[i] != int(v) {
				t.Errorf("gzip %v: label %d = %d, want %d", gz, i, labels[i], v)
			}
		}
	}
}

func TestReadIDXRejects(t *testing.T) {
	good := idxBytes(MagicImages, []uint32{2, 2, 2}, make([]byte, 8))
	gzGood := gzipBytes(t, good)
	corrupt := append([]byte(nil), gzGood...)
	corrupt[len(corrupt)-5] ^= 0xff // the CRC-32 in gzip's trailer
	for _, c := range []struct {
		name   string
		labels bool // read with ReadLabels instead of ReadImages
		b      []byte
		want   string
	}{
		{"empty file", false, nil, "reading the magic number"},
		{"short magic", false, []byte{0, 0, 8}, "reading the magic number"},
		{"labels read as images", false, idxBytes(MagicLabels, []uint32{1}, []byte{1}), "magic number 0x00000801, want 0x00000803"},
		{"images read as labels", true, good, "magic number 0x00000803, want 0x00000801"},
		{"float element type", false, idxBytes(0x00000d03, []uint32{1, 1, 1}, make([]byte, 4)), "magic number 0x00000d03"},
		{"truncated dimensions", false, idxBytes(MagicImages, []uint32{2, 2}, nil), "reading the 3 dimension sizes"},
		{"too many items", false, idxBytes(MagicImages, []uint32{MaxItems + 1, 1, 1}, nil), "more than the 10000000"},
		{"too many labels", true, idxBytes(MagicLabels, []uint32{1 << 31}, nil), "more than the 10000000"},
		{"image too large", false, idxBytes(MagicImages, []uint32{1, 65, 64}, nil), "(4160 pixels), more than the 4096"},
		{"absurd side", false, idxBytes(MagicImages, []uint32{1, 1 << 30, 1}, nil), "more than the 4096 pixels"},
		{"zero side", false, idxBytes(MagicImages, []uint32{1, 0, 28}, nil), "both sides must be positive"},
		{"truncated data", false, good[:len(good)-1], "holds 7 data bytes after the header, want 8"},
		{"trailing byte", false, append(append([]byte(nil), good...), 0), "trailing bytes"},
		{"truncated labels", true, idxBytes(MagicLabels, []uint32{3}, []byte{1, 2}), "holds 2 data bytes after the header, want 3"},
		{"bad gzip header", false, []byte{0x1f, 0x8b, 0, 0}, "gzip header"},
		{"truncated gzip", false, gzGood[:len(gzGood)-4], "unexpected EOF"},
		{"gzip checksum", false, corrupt, "reading past the data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "f.idx", c.b)
			var err error
			if c.labels {
				_, err = ReadLabels(path)
			} else {
				_, err = ReadImages(path)
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not name the file and %q", err, c.want)
			}
		})
	}
}

func TestReadImagesMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.gz")
	_, err := ReadImages(path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v does not name %s", err, path)
	}
}

// FuzzReadIDX feeds arbitrary bytes, gzipped or not, to the IDX reader as
// images and as labels: it must never panic, and what it accepts must be
// consistent with its header.
func FuzzReadIDX(f *testing.F) {
	f.Add(idxBytes(MagicImages, []uint32{2, 2, 2}, make([]byte, 8)))
	f.Add(idxBytes(MagicLabels, []uint32{3}, []byte{1, 2, 3}))
	f.Add(idxBytes(MagicImages, []uint32{MaxItems, 64, 64}, []byte{1}))
	f.Add(gzipBytes(f, idxBytes(MagicImages, []uint32{1, 3, 3}, make([]byte, 9))))
	f.Add(gzipBytes(f, idxBytes(MagicLabels, []uint32{1}, []byte{7})))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, magic := range []uint32{MagicImages, MagicLabels} {
			dims, data, err := readIDX(bytes.NewReader(b), magic)
			if err != nil {
				continue
			}
			size := 1
			for _, d := range dims {
				size *= d
			}
			if len(dims) != int(magic&0xff) || len(data) != size {
				t.Fatalf("accepted dims %v with %d data bytes", dims, len(data))
			}
		}
	})
}
