package dataset

import (
	"fmt"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"
)

// The data sets Load and Prepare build.
const (
	// FashionMNIST is the paper's MNIST experiment on Fashion-MNIST: one
	// context per training image (PCA to 20 dimensions, unit norm), ten
	// arms, reward 1 for the arm of the image's class and 0 otherwise.
	FashionMNIST = "fashion-mnist"
	// Synthetic is the paper's many-arm variant on the same contexts: K
	// arms, one per k-means cluster, Bernoulli rewards with the Gaussian
	// kernel means of ArmMeans.
	Synthetic = "synthetic"
)

// Contexts is the contextual bandit's context set: every Fashion-MNIST
// training image projected onto the training set's first PCADims principal
// components and scaled to unit norm, in the file's order, with its class.
// Building it takes a few seconds; a caller running several experiments
// builds it once and calls Bandit on it for each.
type Contexts struct {
	// X holds one context per image (rows of PCADims values sharing one
	// backing array). Treat it as read-only: Bandit returns these very rows.
	X [][]float64
	// Labels holds each image's class, 0..9.
	Labels []int
}

// FashionMNISTContexts reads Fashion-MNIST's training set from dir (normally
// FashionMNISTDir), fits the PCA on it and returns the projected, unit-norm
// contexts with their labels (section 5 of the paper).
//
// The pixels stay bytes, converted a block of rows at a time for the PCA's
// passes: the contexts are ProjectImages's to the bit (TestContextsFromBytes)
// in an eighth of the memory (47 MB of pixels instead of 376 MB).
func FashionMNISTContexts(dir string) (*Contexts, error) {
	im, labels, err := loadFashionBytes(dir, FashionTrainImages, FashionTrainLabels)
	if err != nil {
		return nil, err
	}
	return projectImageBytes(im, labels, PCADims)
}

// projectImageBytes is ProjectImages on images kept as bytes.
func projectImageBytes(im *imageBytes, labels []int, k int) (*Contexts, error) {
	if len(labels) != im.n {
		return nil, fmt.Errorf("%d labels for %d images", len(labels), im.n)
	}
	p, err := fitPCA(im.byteRows, k)
	if err != nil {
		return nil, fmt.Errorf("projecting %d images: %w", im.n, err)
	}
	rows, err := p.projectRows(im.byteRows)
	if err != nil {
		return nil, fmt.Errorf("projecting %d images: %w", im.n, err)
	}
	NormalizeRows(rows)
	return &Contexts{X: rows, Labels: labels}, nil
}

// ProjectImages fits a k-component PCA on the images and returns their
// projections, each scaled to unit norm (NormalizeRows), with the labels.
func ProjectImages(im *Images, labels []int, k int) (*Contexts, error) {
	if len(labels) != im.Count {
		return nil, fmt.Errorf("%d labels for %d images", len(labels), im.Count)
	}
	x := mat.NewDense(im.Count, im.Dim(), im.Pixels)
	p, err := FitPCA(x, k)
	if err != nil {
		return nil, fmt.Errorf("projecting %d images: %w", im.Count, err)
	}
	rows, err := p.Project(x)
	if err != nil {
		return nil, fmt.Errorf("projecting %d images: %w", im.Count, err)
	}
	NormalizeRows(rows)
	return &Contexts{X: rows, Labels: labels}, nil
}

// A RangeError reports an argument of Bandit, Load or Prepare outside its
// range. Arg names the argument as "steps" (limit: one context per step)
// or "arms", so that a caller can name its own key or flag for it
// (errors.As): the simulator says params.steps, the data command --steps.
type RangeError struct {
	// Dataset is the data set asked for.
	Dataset string
	// Arg is "steps" or "arms".
	Arg string
	// Value is what was asked for; Min and Max bound what the data set has
	// (for a negative steps, Max is -1: not known before the data are read).
	Value, Min, Max int
}

func (e *RangeError) Error() string {
	switch {
	case e.Arg == "steps" && e.Value < 0:
		return fmt.Sprintf("data set %s: %d steps is negative", e.Dataset, e.Value)
	case e.Arg == "steps":
		return fmt.Sprintf("data set %s: %d steps, but it has only %d contexts (one per step)", e.Dataset, e.Value, e.Max)
	}
	return fmt.Sprintf("data set %s: %d %s, want %d..%d", e.Dataset, e.Value, e.Arg, e.Min, e.Max)
}

// checkArgs checks what can be checked of Bandit's arguments without the
// contexts: a limit that is not negative and, for Synthetic, the arms.
func checkArgs(dataset string, arms, limit int) error {
	if limit < 0 {
		return &RangeError{Dataset: dataset, Arg: "steps", Value: limit, Max: -1} // Max unknown yet
	}
	if dataset == Synthetic && (arms < 2 || arms > MaxArms) {
		return &RangeError{Dataset: dataset, Arg: "arms", Value: arms, Min: 2, Max: MaxArms}
	}
	return nil
}

// Bandit returns the first limit contexts (all of them if limit is 0) and,
// for each, the realised reward of every arm, for dataset FashionMNIST or
// Synthetic:
//
//   - FashionMNIST: arms must be 10 (or 0, meaning 10); the reward row is the
//     one-hot encoding of the label. seed is not used.
//   - Synthetic: arms = K in 2..MaxArms; KMeans(c.X, K, seed) clusters all
//     the contexts (not only the first limit, so a shorter run sees a prefix
//     of a longer one's data), and DrawRewards draws every arm's Bernoulli
//     reward with the means ArmMeans(centres, x, Sigma).
//
// The returned contexts are c.X's rows themselves, not copies.
func (c *Contexts) Bandit(dataset string, arms int, seed uint64, limit int) (contexts, rewards [][]float64, err error) {
	n := len(c.X)
	if limit < 0 || limit > n {
		return nil, nil, &RangeError{Dataset: dataset, Arg: "steps", Value: limit, Max: n}
	}
	if limit == 0 {
		limit = n
	}
	contexts = c.X[:limit:limit]
	switch dataset {
	case FashionMNIST:
		if arms != 0 && arms != FashionClasses {
			return nil, nil, fmt.Errorf("data set %s has %d arms (one per class), not %d", dataset, FashionClasses, arms)
		}
		rewards, err = OneHotRewards(c.Labels[:limit], FashionClasses)
		if err != nil {
			return nil, nil, fmt.Errorf("data set %s: %w", dataset, err)
		}
		return contexts, rewards, nil
	case Synthetic:
		if err := checkArgs(dataset, arms, limit); err != nil {
			return nil, nil, err
		}
		cl, err := KMeans(c.X, arms, seed)
		if err != nil {
			return nil, nil, fmt.Errorf("data set %s: %w", dataset, err)
		}
		return contexts, DrawRewards(Means(cl.Centres, contexts, Sigma), seed), nil
	}
	return nil, nil, fmt.Errorf("unknown data set %q (want %q or %q)", dataset, FashionMNIST, Synthetic)
}

// OneHotRewards returns one reward row per label: 1 in the label's column,
// 0 in the other arms' columns.
func OneHotRewards(labels []int, arms int) ([][]float64, error) {
	flat := make([]float64, len(labels)*arms)
	rows := make([][]float64, len(labels))
	for i, l := range labels {
		if l < 0 || l >= arms {
			return nil, fmt.Errorf("label %d (item %d) is not an arm in 0..%d", l, i, arms-1)
		}
		rows[i] = flat[i*arms : (i+1)*arms : (i+1)*arms]
		rows[i][l] = 1
	}
	return rows, nil
}

// Load builds data set FashionMNIST or Synthetic from the Fashion-MNIST files
// in FashionMNISTDir; see Contexts.Bandit for the arguments. It reads and
// projects the images anew on every call: a caller that loads several times
// keeps the result of FashionMNISTContexts and calls Bandit on it.
func Load(dataset string, arms int, seed uint64, limit int) (contexts, rewards [][]float64, err error) {
	return LoadFrom(FashionMNISTDir, dataset, arms, seed, limit)
}

// LoadFrom is Load with the Fashion-MNIST files read from dir.
func LoadFrom(dir, dataset string, arms int, seed uint64, limit int) (contexts, rewards [][]float64, err error) {
	if dataset != FashionMNIST && dataset != Synthetic {
		return nil, nil, fmt.Errorf("unknown data set %q (want %q or %q)", dataset, FashionMNIST, Synthetic)
	}
	if err := checkArgs(dataset, arms, limit); err != nil {
		return nil, nil, err // before seconds of reading and projecting images
	}
	c, err := FashionMNISTContexts(dir)
	if err != nil {
		return nil, nil, err
	}
	return c.Bandit(dataset, arms, seed, limit)
}

// Prepare writes the per-organisation files of a contextual-bandit session
// into outDir (created, mode 0700, if missing): PartyFile(p) for each of the
// parties feature parties, holding its block Split(PCADims, parties)[p] of
// every context's columns, and RewardsFile for the reward receiver. The
// contexts and rewards are LoadFrom(dir, dataset, arms, seed, limit)'s. Each
// organisation then gets only its own file.
func Prepare(dir, outDir string, parties int, dataset string, arms int, seed uint64, limit int) error {
	if parties < 1 || parties > PCADims {
		return fmt.Errorf("preparing %s files: %d feature parties, want 1..%d (one feature at least each)", dataset, parties, PCADims)
	}
	contexts, rewards, err := LoadFrom(dir, dataset, arms, seed, limit)
	if err != nil {
		return fmt.Errorf("preparing %s files: %w", dataset, err)
	}
	return WriteSession(outDir, parties, contexts, rewards)
}

// WriteSession writes contexts split among parties feature-party files and
// the rewards file into outDir, as Prepare does.
func WriteSession(outDir string, parties int, contexts, rewards [][]float64) error {
	if len(contexts) == 0 {
		return fmt.Errorf("writing session files into %s: no contexts", outDir)
	}
	d := len(contexts[0])
	if parties < 1 || parties > d {
		return fmt.Errorf("writing session files into %s: %d feature parties for %d features, want 1..%d", outDir, parties, d, d)
	}
	for i, row := range contexts {
		if len(row) != d {
			return fmt.Errorf("writing session files into %s: context %d has %d features, context 0 has %d", outDir, i, len(row), d)
		}
	}
	if len(rewards) != len(contexts) {
		return fmt.Errorf("writing session files into %s: %d reward rows for %d contexts", outDir, len(rewards), len(contexts))
	}
	if err := os.MkdirAll(outDir, 0o700); err != nil {
		return fmt.Errorf("writing session files: %w", err)
	}
	for p, r := range Split(d, parties) {
		if err := WriteFeatures(filepath.Join(outDir, PartyFile(p)), Columns(contexts, r[0], r[1])); err != nil {
			return err
		}
	}
	return WriteRewards(filepath.Join(outDir, RewardsFile), rewards)
}
