package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FashionMNISTDir is where Debian's package dataset-fashion-mnist installs
// the Fashion-MNIST IDX files (gzip-compressed).
const FashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// The file names of Fashion-MNIST in FashionMNISTDir, as installed by the
// Debian package dataset-fashion-mnist.
const (
	FashionTrainImages = "train-images-idx3-ubyte.gz"
	FashionTrainLabels = "train-labels-idx1-ubyte.gz"
	FashionTestImages  = "t10k-images-idx3-ubyte.gz"
	FashionTestLabels  = "t10k-labels-idx1-ubyte.gz"
)

// Fashion-MNIST's shape: 28×28-pixel images in ten classes.
const (
	FashionSide    = 28
	FashionClasses = 10
)

// InstallHint tells an operator how to get the Fashion-MNIST files.
const InstallHint = "install the Debian package dataset-fashion-mnist (apt-get install dataset-fashion-mnist)"

// Set is Fashion-MNIST as read from its IDX files: the training set (60,000
// images in the released data) and the test set (10,000), each with one label
// in 0..9 per image.
type Set struct {
	Train       *Images
	TrainLabels []int
	Test        *Images
	TestLabels  []int
}

// LoadFashionMNIST reads the four Fashion-MNIST IDX files from dir (normally
// FashionMNISTDir) and checks that the images are 28×28, that each image has
// a label and that every label is a class in 0..9. If the files are missing,
// the error says which package to install; errors.Is(err, fs.ErrNotExist)
// holds for it.
func LoadFashionMNIST(dir string) (*Set, error) {
	var s Set
	var err error
	if s.Train, s.TrainLabels, err = loadFashionPart(dir, FashionTrainImages, FashionTrainLabels); err != nil {
		return nil, err
	}
	if s.Test, s.TestLabels, err = loadFashionPart(dir, FashionTestImages, FashionTestLabels); err != nil {
		return nil, err
	}
	return &s, nil
}

// loadFashionTrain reads only Fashion-MNIST's training images and labels.
func loadFashionTrain(dir string) (*Images, []int, error) {
	return loadFashionPart(dir, FashionTrainImages, FashionTrainLabels)
}

// loadFashionPart reads one images file and its labels file from dir and
// checks them against each other.
func loadFashionPart(dir, imagesName, labelsName string) (*Images, []int, error) {
	b, labels, err := loadFashionBytes(dir, imagesName, labelsName)
	if err != nil {
		return nil, nil, err
	}
	im := &Images{Count: b.n, Rows: b.rows, Cols: b.cols, Pixels: make([]float64, len(b.data))}
	for i, v := range b.data {
		im.Pixels[i] = b.scale[v]
	}
	return im, labels, nil
}

// loadFashionBytes is loadFashionPart with the pixels kept as bytes.
func loadFashionBytes(dir, imagesName, labelsName string) (*imageBytes, []int, error) {
	imagesPath, labelsPath := filepath.Join(dir, imagesName), filepath.Join(dir, labelsName)
	for _, p := range []string{imagesPath, labelsPath} {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("Fashion-MNIST file %s is missing: %s: %w", p, InstallHint, err)
		}
	}
	im, err := readImageBytes(imagesPath)
	if err != nil {
		return nil, nil, fmt.Errorf("loading Fashion-MNIST: %w", err)
	}
	if im.rows != FashionSide || im.cols != FashionSide {
		return nil, nil, fmt.Errorf("loading Fashion-MNIST: %s holds %d×%d-pixel images, want %d×%d",
			imagesPath, im.rows, im.cols, FashionSide, FashionSide)
	}
	labels, err := ReadLabels(labelsPath)
	if err != nil {
		return nil, nil, fmt.Errorf("loading Fashion-MNIST: %w", err)
	}
	if len(labels) != im.n {
		return nil, nil, fmt.Errorf("loading Fashion-MNIST: %s holds %d labels but %s holds %d images",
			labelsPath, len(labels), imagesPath, im.n)
	}
	for i, l := range labels {
		if l >= FashionClasses {
			return nil, nil, fmt.Errorf("loading Fashion-MNIST: %s: label %d (item %d) is not a class in 0..%d",
				labelsPath, l, i, FashionClasses-1)
		}
	}
	return im, labels, nil
}
