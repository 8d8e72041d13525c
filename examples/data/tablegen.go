//go:build ignore

// tablegen writes the example tables of examples/data from the copies
// scikit-learn ships (sklearn/datasets/data/NAME.csv: a line "ROWS,FEATURES,
// CLASS NAMES…", then one line per sample of its features and a class
// 0, 1, …). See README.md beside this file for where to get those files.
//
//	go run examples/data/tablegen.go iris IRIS.csv > examples/data/iris.csv
//	go run examples/data/tablegen.go wine WINE.csv > examples/data/wine.csv
//
// It writes a header, then every sample twice: two passes over them, each
// in its own order, shuffled with math/rand/v2's ChaCha8 from fixed seeds
// (the sources list the samples class by class, and a bandit that met 50
// setosas first would learn nothing of the others until step 51).
package main

import (
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
)

// table is one of scikit-learn's tables: its size and the header written.
type table struct {
	rows, features int
	header         []string
}

var tables = map[string]table{
	"iris": {150, 4, []string{"sepal_length_cm", "sepal_width_cm", "petal_length_cm", "petal_width_cm", "species"}},
	"wine": {178, 13, []string{"alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols", "flavanoids",
		"nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue", "od280_od315", "proline", "cultivar"}},
}

func main() {
	t, ok := tables[arg(1)]
	if len(os.Args) != 3 || !ok {
		fmt.Fprintln(os.Stderr, "usage: go run tablegen.go iris|wine SOURCE.csv > TABLE.csv")
		os.Exit(2)
	}
	if err := run(t, os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "tablegen:", err)
		os.Exit(1)
	}
}

func arg(i int) string {
	if i < len(os.Args) {
		return os.Args[i]
	}
	return ""
}

func run(t table, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return err
	}
	if len(recs) != t.rows+1 || len(recs[0]) < 2 || recs[0][0] != strconv.Itoa(t.rows) || recs[0][1] != strconv.Itoa(t.features) {
		return fmt.Errorf("%s is not scikit-learn's table of %d rows of %d features", path, t.rows, t.features)
	}
	classes := len(recs[0]) - 2
	samples := recs[1:]
	for i, rec := range samples {
		if len(rec) != t.features+1 {
			return fmt.Errorf("%s, line %d: %d fields, want %d", path, i+2, len(rec), t.features+1)
		}
		for _, v := range rec[:t.features] {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return fmt.Errorf("%s, line %d: %w", path, i+2, err)
			}
		}
		if c, err := strconv.Atoi(rec[t.features]); err != nil || c < 0 || c >= classes {
			return fmt.Errorf("%s, line %d: class %q, want 0 to %d", path, i+2, rec[t.features], classes-1)
		}
	}
	w := csv.NewWriter(os.Stdout)
	w.Write(t.header)
	for pass := range uint64(2) {
		rng := rand.New(rand.NewChaCha8([32]byte{byte(pass + 1)}))
		for _, i := range rng.Perm(len(samples)) {
			w.Write(samples[i])
		}
	}
	w.Flush()
	return w.Error()
}
