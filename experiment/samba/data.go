package samba

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// movielensCSV is the SAMBA paper's prototype's MovieLens-100k arm means
// (the prototype's movielens_K100_sorted_desc.csv, also in
// protocol/samba/testdata): movie i's μ_i = (ratings ≥ 4) / 943 users —
// the prototype divides by all users, not by the ratings the movie
// received as the paper's text says; either is a Bernoulli mean, and this
// is the one the paper's figures were drawn from — sorted in descending
// order (rank 0 is the best arm).
//
//go:embed movielens.csv
var movielensCSV []byte

// DatasetMovieLens names the embedded MovieLens arm means.
const DatasetMovieLens = "movielens"

// sambaDataset is a named list of arm means, sorted in descending order.
type sambaDataset struct {
	Name  string
	Means []float64
	// Tuning is its algorithms' parameters: MovieLens's own, or those of
	// a means file's description (descriptionPath) over MovieLens's.
	Tuning tuned
}

// loadSAMBADataset returns the arm means named by name: "movielens" (or
// "") for the embedded MovieLens means, anything else a file of means, one
// per line.
func loadSAMBADataset(name string) (sambaDataset, error) {
	if name == "" || name == DatasetMovieLens {
		means, err := readMovieLens(bytes.NewReader(movielensCSV))
		if err != nil {
			return sambaDataset{}, fmt.Errorf("the embedded MovieLens means: %w", err)
		}
		return sambaDataset{Name: DatasetMovieLens, Means: means, Tuning: builtinTuning()}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return sambaDataset{}, fmt.Errorf("dataset: %w (give movielens or a file of arm means, one per line)", err)
	}
	defer f.Close()
	means, err := ReadArmMeans(f)
	if err != nil {
		return sambaDataset{}, fmt.Errorf("dataset %s: %w", name, err)
	}
	t, desc, err := readDescription(name)
	if err != nil {
		return sambaDataset{}, fmt.Errorf("dataset %s: %w", name, err)
	}
	tuning := builtinTuning()
	if desc != "" {
		tuning = tuning.over(t, "the dataset's description "+desc)
	}
	return sambaDataset{Name: name, Means: means, Tuning: tuning}, nil
}

// readMovieLens reads the rank,mu CSV of the paper's prototype.
func readMovieLens(r io.Reader) ([]float64, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) < 3 || len(rows[0]) != 2 || rows[0][1] != "mu" {
		return nil, fmt.Errorf("want a header rank,mu and at least two arms")
	}
	var means []float64
	for i, row := range rows[1:] {
		m, err := strconv.ParseFloat(row[1], 64)
		if err != nil || !(m >= 0 && m <= 1) {
			return nil, fmt.Errorf("line %d: %q is not a mean in [0, 1]", i+2, row[1])
		}
		means = append(means, m)
	}
	return sortedDesc(means), nil
}

// ReadArmMeans reads a file of Bernoulli arm means, one per line; blank
// lines and lines starting with # are skipped. It returns the means sorted
// in descending order, as the paper takes "the K items with largest mean
// rewards". An error names the line and the value.
func ReadArmMeans(r io.Reader) ([]float64, error) {
	sc := bufio.NewScanner(r)
	var means []float64
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		m, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %q is not a number (want one arm mean per line)", line, s)
		}
		if math.IsNaN(m) || m < 0 || m > 1 {
			return nil, fmt.Errorf("line %d: %s is not a Bernoulli mean in [0, 1]", line, s)
		}
		means = append(means, m)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(means) < 2 {
		return nil, fmt.Errorf("%d arm means; SAMBA needs at least 2", len(means))
	}
	return sortedDesc(means), nil
}

func sortedDesc(xs []float64) []float64 {
	out := append([]float64(nil), xs...)
	sort.Sort(sort.Reverse(sort.Float64Slice(out)))
	return out
}
