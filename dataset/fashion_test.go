package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeFashionDir writes a small Fashion-MNIST look-alike into a temporary
// directory: nTrain and nTest random 28×28 images (gzipped IDX, under the
// real file names) whose labels cycle through 0..9. Options may alter the
// files before they are written.
func fakeFashionDir(t testing.TB, nTrain, nTest int, alter ...func(name string, dims []uint32, data []byte) ([]uint32, []byte)) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, magic uint32, dims []uint32, data []byte) {
		for _, f := range alter {
			dims, data = f(name, dims, data)
		}
		writeFile(t, dir, name, gzipBytes(t, idxBytes(magic, dims, data)))
	}
	for _, part := range []struct {
		images, labels string
		n              int
		seed           uint64
	}{
		{FashionTrainImages, FashionTrainLabels, nTrain, 1},
		{FashionTestImages, FashionTestLabels, nTest, 2},
	} {
		write(part.images, MagicImages, []uint32{uint32(part.n), FashionSide, FashionSide}, randomBytes(part.n*FashionSide*FashionSide, part.seed))
		labels := make([]byte, part.n)
		for i := range labels {
			labels[i] = byte(i % FashionClasses)
		}
		write(part.labels, MagicLabels, []uint32{uint32(part.n)}, labels)
	}
	return dir
}

func TestLoadFashionMNISTFake(t *testing.T) {
	dir := fakeFashionDir(t, 30, 12)
	s, err := LoadFashionMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Train.Count != 30 || len(s.TrainLabels) != 30 || s.Test.Count != 12 || len(s.TestLabels) != 12 {
		t.Fatalf("got %d+%d training and %d+%d test images+labels", s.Train.Count, len(s.TrainLabels), s.Test.Count, len(s.TestLabels))
	}
	if s.TrainLabels[13] != 3 {
		t.Errorf("training label 13 = %d, want 3", s.TrainLabels[13])
	}
}

func TestLoadFashionMNISTRejects(t *testing.T) {
	for _, c := range []struct {
		name  string
		alter func(name string, dims []uint32, data []byte) ([]uint32, []byte)
		want  string
	}{
		{"label out of range", func(name string, dims []uint32, data []byte) ([]uint32, []byte) {
			if name == FashionTestLabels {
				data[4] = 10
			}
			return dims, data
		}, "label 10 (item 4) is not a class in 0..9"},
		{"fewer labels than images", func(name string, dims []uint32, data []byte) ([]uint32, []byte) {
			if name == FashionTrainLabels {
				return []uint32{dims[0] - 1}, data[1:]
			}
			return dims, data
		}, "holds 9 labels but"},
		{"not 28×28", func(name string, dims []uint32, data []byte) ([]uint32, []byte) {
			if name == FashionTrainImages {
				return []uint32{dims[0] * 4, 14, 14}, data
			}
			return dims, data
		}, "holds 14×14-pixel images, want 28×28"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadFashionMNIST(fakeFashionDir(t, 10, 10, c.alter))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestLoadFashionMNISTMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nowhere")
	for name, load := range map[string]func() error{
		"LoadFashionMNIST": func() error { _, err := LoadFashionMNIST(dir); return err },
		"LoadFrom":         func() error { _, _, err := LoadFrom(dir, FashionMNIST, 10, 1, 0); return err },
		"Prepare":          func() error { return Prepare(dir, t.TempDir(), 2, Synthetic, 5, 1, 0) },
	} {
		err := load()
		if err == nil || !errors.Is(err, fs.ErrNotExist) ||
			!strings.Contains(err.Error(), "apt-get install dataset-fashion-mnist") ||
			!strings.Contains(err.Error(), filepath.Join(dir, FashionTrainImages)) {
			t.Errorf("%s: error %v does not name the missing file and the package to install", name, err)
		}
	}
}

// TestFashionMNISTReal checks the real Fashion-MNIST from the Debian package
// (section 5: 60,000 training images projected to 20 unit-norm dimensions,
// ten classes). It is skipped when the package is not installed, and under
// the race detector, which makes it take over 30 s instead of 4 s (.ci/run
// runs it without -race).
func TestFashionMNISTReal(t *testing.T) {
	if _, err := os.Stat(filepath.Join(FashionMNISTDir, FashionTrainImages)); err != nil {
		t.Skipf("Fashion-MNIST not found (%v): %s", err, InstallHint)
	}
	if testing.Short() || raceEnabled {
		t.Skip("about 4 s of PCA on 60,000 images, over 30 s under -race: skipped with -short and -race; .ci/run runs it without -race")
	}
	c, err := FashionMNISTContexts(FashionMNISTDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.X) != 60000 || len(c.Labels) != 60000 {
		t.Fatalf("%d contexts and %d labels, want 60,000 of each", len(c.X), len(c.Labels))
	}
	var perClass [FashionClasses]int
	for i, x := range c.X {
		if len(x) != PCADims {
			t.Fatalf("context %d has %d dimensions, want %d", i, len(x), PCADims)
		}
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		if math.Abs(ss-1) > 1e-12 {
			t.Fatalf("context %d has squared norm %v, want 1", i, ss)
		}
		if c.Labels[i] < 0 || c.Labels[i] >= FashionClasses {
			t.Fatalf("label %d = %d, want 0..9", i, c.Labels[i])
		}
		perClass[c.Labels[i]]++
	}
	for l, k := range perClass {
		if k != 6000 { // Fashion-MNIST's training set is balanced
			t.Errorf("class %d has %d training images, want 6,000", l, k)
		}
	}
	contexts, rewards, err := c.Bandit(FashionMNIST, 10, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(contexts) != 100 || len(rewards) != 100 || rewards[7][c.Labels[7]] != 1 {
		t.Errorf("Bandit(fashion-mnist, limit 100): %d contexts, %d reward rows, row 7 %v for label %d",
			len(contexts), len(rewards), rewards[7], c.Labels[7])
	}
}

// BenchmarkFashionMNISTContexts measures what Load spends before it builds
// rewards: reading the 60,000 training images, fitting the PCA and
// projecting and normalising every image.
func BenchmarkFashionMNISTContexts(b *testing.B) {
	if _, err := os.Stat(filepath.Join(FashionMNISTDir, FashionTrainImages)); err != nil {
		b.Skipf("Fashion-MNIST not found (%v): %s", err, InstallHint)
	}
	for b.Loop() {
		if _, err := FashionMNISTContexts(FashionMNISTDir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyntheticArms measures building the synthetic variant's rewards
// on the real contexts: k-means with 10 and 100 arms, kernel means and
// Bernoulli draws for all 60,000 contexts.
func BenchmarkSyntheticArms(b *testing.B) {
	if _, err := os.Stat(filepath.Join(FashionMNISTDir, FashionTrainImages)); err != nil {
		b.Skipf("Fashion-MNIST not found (%v): %s", err, InstallHint)
	}
	c, err := FashionMNISTContexts(FashionMNISTDir)
	if err != nil {
		b.Fatal(err)
	}
	for _, arms := range []int{10, 100} {
		b.Run(fmt.Sprintf("arms=%d", arms), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := c.Bandit(Synthetic, arms, 1, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
