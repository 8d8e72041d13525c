//go:build ignore

// iris-gen writes examples/data/iris.csv, the example table of
// examples/mpccb-csv.toml, from Fisher's Iris data as scikit-learn ships it
// (sklearn/datasets/data/iris.csv: a line "150,4,setosa,versicolor,virginica",
// then 150 lines of four measurements in cm and a class 0, 1 or 2). See
// README.md beside this file for where to get that file.
//
//	go run examples/data/iris-gen.go IRIS.csv > examples/data/iris.csv
//
// It writes a header, then every flower twice: two passes over the 150,
// each in its own order, shuffled with math/rand/v2's ChaCha8 from fixed
// seeds (the source lists the flowers class by class, and a bandit that
// met 50 setosas first would learn nothing of the others until step 51).
package main

import (
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run iris-gen.go IRIS.csv > iris.csv")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "iris-gen:", err)
		os.Exit(1)
	}
}

func run(path string) error {
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
	if len(recs) != 151 || len(recs[0]) != 5 || recs[0][0] != "150" || recs[0][1] != "4" {
		return fmt.Errorf("%s is not scikit-learn's iris.csv (150 rows of 4 features)", path)
	}
	flowers := recs[1:]
	for i, rec := range flowers {
		if len(rec) != 5 {
			return fmt.Errorf("%s, line %d: %d fields, want 5", path, i+2, len(rec))
		}
		for _, v := range rec[:4] {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return fmt.Errorf("%s, line %d: %w", path, i+2, err)
			}
		}
		if c := rec[4]; c != "0" && c != "1" && c != "2" {
			return fmt.Errorf("%s, line %d: class %q, want 0, 1 or 2", path, i+2, c)
		}
	}
	w := csv.NewWriter(os.Stdout)
	w.Write([]string{"sepal_length_cm", "sepal_width_cm", "petal_length_cm", "petal_width_cm", "species"})
	for pass := range uint64(2) {
		rng := rand.New(rand.NewChaCha8([32]byte{byte(pass + 1)}))
		for _, i := range rng.Perm(len(flowers)) {
			w.Write(flowers[i])
		}
	}
	w.Flush()
	return w.Error()
}
