package dataset

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// IDX magic numbers: two zero bytes, the element type (0x08, unsigned byte)
// and the number of dimensions.
const (
	// MagicImages is the magic number of an IDX file of unsigned-byte
	// images (three dimensions: count, rows, columns).
	MagicImages = 0x00000803
	// MagicLabels is the magic number of an IDX file of unsigned-byte
	// labels (one dimension: count).
	MagicLabels = 0x00000801
)

// Bounds on IDX headers. A header beyond them is refused before anything is
// allocated for it.
const (
	// MaxItems is the largest number of images or labels an IDX file may
	// declare.
	MaxItems = 10_000_000
	// MaxImagePixels is the largest number of pixels (rows × columns) an
	// image may have.
	MaxImagePixels = 4096
)

// gzipMagic starts every gzip stream (RFC 1952, section 2.3.1).
var gzipMagic = [2]byte{0x1f, 0x8b}

// Images is an IDX image file's content: Count images of Rows × Cols pixels,
// each pixel scaled from 0..255 to [0, 1].
type Images struct {
	Count, Rows, Cols int
	// Pixels holds the images one after the other, each row-major:
	// image i is Pixels[i*Rows*Cols : (i+1)*Rows*Cols].
	Pixels []float64
}

// Dim returns the number of pixels of one image, Rows × Cols.
func (im *Images) Dim() int { return im.Rows * im.Cols }

// Image returns image i's pixels (a sub-slice of Pixels, not a copy).
func (im *Images) Image(i int) []float64 {
	d := im.Dim()
	return im.Pixels[i*d : (i+1)*d : (i+1)*d]
}

// ReadImages reads an IDX file of unsigned-byte images (magic 0x00000803),
// gzip-compressed or not (told apart by gzip's magic bytes), and scales
// every pixel to [0, 1] by dividing it by 255. Errors name the file and what
// is wrong with it.
func ReadImages(path string) (*Images, error) {
	b, err := readImageBytes(path)
	if err != nil {
		return nil, err
	}
	im := &Images{Count: b.n, Rows: b.rows, Cols: b.cols, Pixels: make([]float64, len(b.data))}
	for i, v := range b.data {
		im.Pixels[i] = b.scale[v]
	}
	return im, nil
}

// imageBytes is an IDX image file's content as read: Count images of Rows
// × Cols bytes, each pixel b standing for scale[b] = b/255 (ReadImages).
type imageBytes struct {
	byteRows
	rows, cols int
}

// readImageBytes reads an IDX file of unsigned-byte images as ReadImages
// does, keeping the pixels as bytes: an eighth of the memory.
func readImageBytes(path string) (*imageBytes, error) {
	dims, data, err := readIDXFile(path, MagicImages)
	if err != nil {
		return nil, err
	}
	var scale [256]float64 // a pixel's byte to its value in [0, 1]
	for b := range scale {
		scale[b] = float64(b) / 255
	}
	return &imageBytes{byteRows: byteRows{data: data, n: dims[0], d: dims[1] * dims[2], scale: &scale},
		rows: dims[1], cols: dims[2]}, nil
}

// ReadLabels reads an IDX file of unsigned-byte labels (magic 0x00000801),
// gzip-compressed or not. Errors name the file and what is wrong with it.
func ReadLabels(path string) ([]int, error) {
	_, data, err := readIDXFile(path, MagicLabels)
	if err != nil {
		return nil, err
	}
	labels := make([]int, len(data))
	for i, b := range data {
		labels[i] = int(b)
	}
	return labels, nil
}

// readIDXFile opens path and reads it with readIDX, naming the file in any
// error.
func readIDXFile(path string, magic uint32) (dims []int, data []byte, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading IDX file: %w", err)
	}
	defer f.Close()
	dims, data, err = readIDX(f, magic)
	if err != nil {
		return nil, nil, fmt.Errorf("IDX file %s: %w", path, err)
	}
	return dims, data, nil
}

// readIDX reads one IDX stream from r, gunzipping it first if it starts with
// gzip's magic bytes. It checks the magic number against want (MagicImages or
// MagicLabels), bounds the dimensions (MaxItems, MaxImagePixels, no zero
// image side) and requires exactly as many data bytes as the header declares.
// It returns the dimensions and the raw data bytes.
//
// Memory is bounded by the data actually present, not by the header's claim:
// the data is read incrementally up to the declared length, so a short file
// with a huge header costs no more than its own size.
func readIDX(r io.Reader, want uint32) (dims []int, data []byte, err error) {
	br := bufio.NewReader(r)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == gzipMagic[0] && head[1] == gzipMagic[1] {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip header: %w", err)
		}
		defer zr.Close()
		return decodeIDX(zr, want)
	}
	return decodeIDX(br, want)
}

// decodeIDX reads an uncompressed IDX stream; see readIDX.
func decodeIDX(r io.Reader, want uint32) (dims []int, data []byte, err error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, nil, fmt.Errorf("reading the magic number (the first 4 bytes): %w", noEOF(err))
	}
	magic := binary.BigEndian.Uint32(hdr[:])
	if magic != want {
		return nil, nil, fmt.Errorf("magic number 0x%08x, want 0x%08x (%s)", magic, want, describeMagic(want))
	}
	n := int(hdr[3])
	raw := make([]byte, 4*n)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, nil, fmt.Errorf("reading the %d dimension sizes after the magic number: %w", n, noEOF(err))
	}
	dims = make([]int, n)
	for i := range dims {
		u := binary.BigEndian.Uint32(raw[4*i:])
		if u > MaxItems { // also keeps int(u) exact on 32-bit platforms
			if i == 0 {
				return nil, nil, fmt.Errorf("header declares %d items, more than the %d this reader accepts", u, MaxItems)
			}
			return nil, nil, fmt.Errorf("header declares images with a side of %d pixels, more than the %d pixels per image this reader accepts", u, MaxImagePixels)
		}
		dims[i] = int(u)
	}
	size := int64(dims[0])
	if n == 3 {
		if dims[1] == 0 || dims[2] == 0 {
			return nil, nil, fmt.Errorf("header declares %d×%d-pixel images; both sides must be positive", dims[1], dims[2])
		}
		px := int64(dims[1]) * int64(dims[2])
		if px > MaxImagePixels {
			return nil, nil, fmt.Errorf("header declares %d×%d-pixel images (%d pixels), more than the %d this reader accepts",
				dims[1], dims[2], px, MaxImagePixels)
		}
		size *= px
	}
	data, err = readUpTo(r, size)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the data: %w", err)
	}
	if int64(len(data)) < size {
		return nil, nil, fmt.Errorf("file holds %d data bytes after the header, want %d (%v): truncated", len(data), size, dims)
	}
	// The input must end here. Reading on also makes a gzip reader check
	// its trailer (CRC-32 and length), which it does only at the end.
	var extra [1]byte
	if k, err := io.ReadFull(r, extra[:]); k > 0 {
		return nil, nil, fmt.Errorf("trailing bytes after the %d data bytes the header %v declares", size, dims)
	} else if err != io.EOF {
		return nil, nil, fmt.Errorf("reading past the data: %w", err)
	}
	return dims, data, nil
}

// readUpTo reads up to size bytes from r, stopping early at end of input. It
// allocates as data arrives, in pieces that start at 64 KiB and double up to
// 16 MiB, so a short input costs little whatever size says; then it copies
// the pieces once into a slice of exactly the length read.
func readUpTo(r io.Reader, size int64) ([]byte, error) {
	var chunks [][]byte
	var total int64
	piece := int64(64 << 10)
	for total < size {
		chunk := make([]byte, min(size-total, piece))
		piece = min(2*piece, 16<<20)
		k, err := io.ReadFull(r, chunk)
		total += int64(k)
		chunks = append(chunks, chunk[:k])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	data := make([]byte, 0, total)
	for _, c := range chunks {
		data = append(data, c...)
	}
	return data, nil
}

// describeMagic names what an IDX magic number stands for, for error
// messages.
func describeMagic(m uint32) string {
	switch m {
	case MagicImages:
		return "an IDX file of unsigned-byte images"
	case MagicLabels:
		return "an IDX file of unsigned-byte labels"
	}
	return "an IDX file"
}

// noEOF turns a plain io.EOF (nothing read at all) into io.ErrUnexpectedEOF:
// an IDX file that ends inside its header is truncated either way.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
