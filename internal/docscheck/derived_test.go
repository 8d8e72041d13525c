package docscheck

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// computed is one figure a document derives from a results file rather than
// copies from one line of it: the range of a table's column, how many of a
// file's claims fail, a cell of a CSV file. figure computes it from the
// results file's text (what says how, for the error message); the document
// writes it as format (fed the figure, or quoted as it is without a verb;
// "[...]" as in quote).
type computed struct {
	results, what string
	figure        func(text string) (string, error)
	doc, format   string
}

// computedFigures are the figures the docs derive from results/. Add one
// with every such figure.
var computedFigures = []computed{
	// SAMBA's committed run, docs/performance.md.
	{"results/samba/samba_results.md", "the range of the set-up a (s) over the algorithms, least-squares table",
		columnRange("| algorithm | a (s) |", "a (s)", "%.2f"),
		"docs/performance.md", "plus %s s of set-up whatever N"},
	{"results/samba/samba_results.md", "the algorithm with the largest ms per step, least-squares table",
		rowOfMax("| algorithm | a (s) |", "b (ms per step)"),
		"docs/performance.md", "0.349 being %s"},
	{"results/samba/k_sweep/samba_results.md", "the largest change of an algorithm's comp share from K = 10 to K = 100",
		compShareShift,
		"docs/performance.md", "it moves by at most %s points between K = 10 and 100"},
	// The BAI and P-FCB grids' verdicts, docs/performance.md.
	{"results/bai/bai_results.md", "the claims that do not hold", allHold,
		"docs/performance.md", "no claim of the paper fails on Problem 1"},
	{"results/bai-problem2/bai_results.md", "the claims that do not hold", failing,
		"docs/performance.md", "%s of its claims fail at some N"},
	{"results/pfcb/pfcb_results.md", "the claims that do not hold", allHold,
		"docs/performance.md", "no claim of the paper fails, and paired by instance every one holds"},
	// P-FCB, docs/protocols/pfcb.md.
	{"results/pfcb/pfcb_results.md", "every FRR of EXP2 below 1", frrBelowOne,
		"docs/protocols/pfcb.md", "FRR < 1 for every ε"},
	{"results/pfcb/pfcb_results.md", "the range of the ± between instances of the normal rows, to the hundred",
		spreadRange("| normal |"),
		"docs/protocols/pfcb.md", "(normal: ± %s between instances)"},
	{"results/pfcb/pfcb_sensitivity.md", "the run's time, to the minute", minutes,
		"docs/protocols/pfcb.md", "%s minutes on one core"},
	{"results/pfcb/fcb_algorithm1_seed101/pfcb_sensitivity_runs.csv", "fcb_alg1+zeta=0.5, normal, the means over the instances but the one where FCB's regret is largest",
		threeOfFour,
		"docs/protocols/pfcb.md", "the normal family does on three of them (%s)"},
	{"results/pfcb/pfcb_results.md", "EXP1's gaps over FCB against the paper's, both families", smallerGaps,
		"README.md", "P-FCB keeps the paper's ordering with smaller gaps"},
	{"results/pfcb/pfcb_results.md", "EXP1's gaps over FCB against the paper's, both families", smallerGaps,
		"docs/papers.md", "the magnitudes are smaller"},
	// The contextual bandit, docs/protocols/mpccb.md and docs/performance.md.
	{"results/mpccb/mpccb_results.md", "the largest gap in a run over every ε, Figure 1's table",
		columnMax("| ε | η = log(10/ε) |", "largest gap in a run"),
		"docs/protocols/mpccb.md", "the private reward is within %s of the plaintext reference in every run"},
	{"results/mpccb/mpccb_results.md", "the largest gap in a run at the five ε other than 0.05 and 0.02, Figure 1's table",
		columnMax("| ε | η = log(10/ε) |", "largest gap in a run", "0.05", "0.02"),
		"docs/protocols/mpccb.md", "at most %s at the other five"},
	{"results/mpccb/mpccb_results.md", "the lowest arm agreement at or above 99 % and at how many ε, Figure 1's table",
		agreementAbove99,
		"docs/protocols/mpccb.md", "the lowest arm agreement per ε is ≥ %s of the seven values of ε"},
	{"results/mpccb/mpccb_runs.csv", "the reward run at ε = 0.1, seed 1 (examples/mpccb.toml)",
		csvCells("kind=reward,epsilon=0.1,seed=1", "%.2f %% and %.4f", "arm_agreement*100", "average_reward"),
		"docs/protocols/mpccb.md", "%s at wire 1.2.0"},
	{"results/mpccb/mpccb_runs.csv", "the reward run at ε = 0.1, seed 1 (examples/mpccb.toml)",
		csvCells("kind=reward,epsilon=0.1,seed=1", "arm agreement %.2f %%, reward %.4f against the reference's %.4f", "arm_agreement*100", "average_reward", "reference_average_reward"),
		"docs/performance.md", "10,000 Fashion-MNIST steps (`examples/mpccb.toml`) | `bandit-node simulate examples/mpccb.toml --json` | %s"},
	// mpccb's rounds and words per step (wire 1.2.0), docs/performance.md.
	{"results/mpccb/fig3_fig4_time.csv", "the rounds per step at P = 2, |A| = 10",
		csvCells("parties=2,arms=10", "%.0f", "rounds_per_step"),
		"docs/performance.md", "**%s rounds a step at P = 2**"},
	{"results/mpccb/fig3_fig4_time.csv", "the rounds per step at P = 3, |A| = 10",
		csvCells("parties=3,arms=10", "%.0f", "rounds_per_step"),
		"docs/performance.md", "P = 3: %s (21)"},
	{"results/mpccb/fig3_fig4_time.csv", "the rounds per step at P = 5, |A| = 10",
		csvCells("parties=5,arms=10", "%.0f", "rounds_per_step"),
		"docs/performance.md", "P = 5: %s (23)"},
	{"results/mpccb/fig3_fig4_time.csv", "the rounds per step at P = 2, |A| = 100",
		csvCells("parties=2,arms=100", "%.0f", "rounds_per_step"),
		"docs/performance.md", `\|A\| = 100: %s (23)`},
	{"results/mpccb/fig3_fig4_time.csv", "the bytes per step at P = 2, |A| = 10",
		csvCells("parties=2,arms=10", "`bytes_per_step` %s (174,416); the dealer's corrections 29,045 words (14,971): `dealer_bytes_per_step` %s", "bytes_per_step,", "dealer_bytes_per_step,"),
		"docs/performance.md", "%s"},
}

// TestDocsDeriveFromTheResults: every figure in computedFigures reads in its
// document as computed from its results file.
func TestDocsDeriveFromTheResults(t *testing.T) {
	for _, c := range computedFigures {
		b, err := os.ReadFile(filepath.Join(root, c.results))
		if err != nil {
			t.Fatal(err)
		}
		fig, err := c.figure(string(b))
		if err != nil {
			t.Errorf("%s (%s): %v", c.results, c.what, err)
			continue
		}
		doc, err := os.ReadFile(filepath.Join(root, c.doc))
		if err != nil {
			t.Fatal(err)
		}
		want := c.format
		if strings.Contains(want, "%s") {
			want = fmt.Sprintf(c.format, fig)
		}
		if !says(string(doc), want) {
			t.Errorf("%s does not say %q: %s gives %q (%s)", c.doc, oneLine(want), c.results, fig, c.what)
		}
	}
}

// table returns the rows of the markdown table whose header line starts
// with header, each a map from the header's names to the cells.
func table(text, header string) ([]map[string]string, error) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, header) {
			continue
		}
		names := cells(l)
		var rows []map[string]string
		for _, r := range lines[i+1:] {
			if !strings.HasPrefix(r, "|") {
				break
			}
			if strings.HasPrefix(r, "|---") || strings.HasPrefix(r, "| ---") {
				continue
			}
			row := map[string]string{}
			for j, c := range cells(r) {
				if j < len(names) {
					row[names[j]] = c
				}
			}
			rows = append(rows, row)
		}
		return rows, nil
	}
	return nil, fmt.Errorf("no table whose header starts %q", header)
}

// cells splits a markdown table row into its trimmed cells.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(strings.TrimSuffix(row, "|"), "|")
	var out []string
	for _, c := range strings.Split(row, "|") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// column returns a table's column as numbers (the leading number of each
// cell).
func column(text, header, name string) ([]float64, error) {
	rows, err := table(text, header)
	if err != nil {
		return nil, err
	}
	lead := regexp.MustCompile(`^-?[\d.]+`)
	var vals []float64
	for _, r := range rows {
		c, ok := r[name]
		if !ok {
			return nil, fmt.Errorf("table %q has no column %q", header, name)
		}
		v, err := strconv.ParseFloat(lead.FindString(c), 64)
		if err != nil {
			return nil, fmt.Errorf("table %q, column %q: %q is not a number", header, name, c)
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("table %q has no rows", header)
	}
	return vals, nil
}

// columnRange is the figure "min–max" of a table's column.
func columnRange(header, name, format string) func(string) (string, error) {
	return func(text string) (string, error) {
		vals, err := column(text, header, name)
		if err != nil {
			return "", err
		}
		lo, hi := minMax(vals)
		return fmt.Sprintf(format, lo) + "–" + fmt.Sprintf(format, hi), nil
	}
}

// columnMax is the figure: the largest number in a table's column, as the
// table writes it, leaving out the rows whose first cell is one of except.
func columnMax(header, name string, except ...string) func(string) (string, error) {
	return func(text string) (string, error) {
		r, err := maxRow(text, header, name, except)
		if err != nil {
			return "", err
		}
		return r[name], nil
	}
}

// rowOfMax is the figure: the first cell, capitalised, of the row with the
// largest number in a table's column.
func rowOfMax(header, name string) func(string) (string, error) {
	return func(text string) (string, error) {
		r, err := maxRow(text, header, name, nil)
		if err != nil {
			return "", err
		}
		best := r[cells(header)[0]]
		return strings.ToUpper(best[:1]) + best[1:], nil
	}
}

// maxRow returns the row of the table under header with the largest
// number in column name, leaving out the rows whose first cell is one of
// except.
func maxRow(text, header, name string, except []string) (map[string]string, error) {
	rows, err := table(text, header)
	if err != nil {
		return nil, err
	}
	first := cells(header)[0]
	var best map[string]string
	bestV := math.Inf(-1)
	for _, r := range rows {
		if slices.Contains(except, r[first]) {
			continue
		}
		v, err := strconv.ParseFloat(r[name], 64)
		if err != nil {
			return nil, fmt.Errorf("table %q, column %q: %q is not a number", header, name, r[name])
		}
		if v > bestV {
			best, bestV = r, v
		}
	}
	if best == nil || best[first] == "" {
		return nil, fmt.Errorf("table %q has no rows", header)
	}
	return best, nil
}

// compShareShift is the figure: the largest change, in points, of one
// algorithm's comp share between the two K of the claim "for the same N,
// Comp's share stays the same whatever K".
func compShareShift(text string) (string, error) {
	line := lineOf(text, "- for the same N, Comp's share")
	m := regexp.MustCompile(`at K = \d+: ([\d., %]+); at K = \d+: ([\d., %]+) \(`).FindStringSubmatch(line)
	if m == nil {
		return "", fmt.Errorf("no shares at two K in %q", line)
	}
	a, b := numbers(m[1]), numbers(m[2])
	if len(a) != len(b) || len(a) == 0 {
		return "", fmt.Errorf("the shares at the two K do not pair up in %q", line)
	}
	var most float64
	for i := range a {
		most = math.Max(most, math.Abs(a[i]-b[i]))
	}
	return fmt.Sprintf("%.1f", most), nil
}

// allHold is the (empty) figure of a results file whose every claim holds,
// an error naming the first that does not.
func allHold(text string) (string, error) {
	if l := lineOf(text, "**does not hold**"); l != "" {
		return "", fmt.Errorf("a claim does not hold: %q", l)
	}
	if !strings.Contains(text, "**holds**") {
		return "", fmt.Errorf("no claim holds")
	}
	return "", nil
}

// failing is the figure: how many claims do not hold, in words.
func failing(text string) (string, error) {
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	n := strings.Count(text, "**does not hold**")
	if n >= len(words) {
		return strconv.Itoa(n), nil
	}
	return words[n], nil
}

// frrBelowOne is the (empty) figure of a P-FCB results file whose every
// FRR, on both families, is below 1.
func frrBelowOne(text string) (string, error) {
	for _, family := range []string{"uniform", "normal"} {
		line := lineOf(text, "- FRR falls as ε grows on "+family+" instances:")
		m := regexp.MustCompile(`\[([\d. ]+)\]`).FindStringSubmatch(line)
		if m == nil {
			return "", fmt.Errorf("no FRR of the %s instances", family)
		}
		for _, v := range numbers(m[1]) {
			if v >= 1 {
				return "", fmt.Errorf("an FRR of the %s instances is %v", family, v)
			}
		}
	}
	return "", nil
}

// spreadRange is the figure "lo–hi" of the ± figures in the rows that start
// with row, to the hundred, with thousands separators.
func spreadRange(row string) func(string) (string, error) {
	return func(text string) (string, error) {
		var vals []float64
		for _, l := range strings.Split(text, "\n") {
			if !strings.HasPrefix(l, row) {
				continue
			}
			for _, m := range regexp.MustCompile(`\(±(\d+)\)`).FindAllStringSubmatch(l, -1) {
				v, _ := strconv.ParseFloat(m[1], 64)
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			return "", fmt.Errorf("no ± in the rows %q", row)
		}
		lo, hi := minMax(vals)
		hundred := func(v float64) string { return withThousands(strconv.Itoa(int(math.Round(v/100) * 100))) }
		return hundred(lo) + "–" + hundred(hi), nil
	}
}

// minutes is the figure: a results file's run time ("in 32m57s"), to the
// minute.
func minutes(text string) (string, error) {
	m := regexp.MustCompile(`in (\d+)m(\d+)s`).FindStringSubmatch(text)
	if m == nil {
		return "", fmt.Errorf("no run time")
	}
	min, _ := strconv.Atoi(m[1])
	sec, _ := strconv.Atoi(m[2])
	if sec >= 30 {
		min++
	}
	return strconv.Itoa(min), nil
}

// agreementAbove99 is the figure "lowest % at N": the lowest of the per-ε
// lowest arm agreements that are at least 99 %, and at how many ε (words).
func agreementAbove99(text string) (string, error) {
	vals, err := column(text, "| ε | η = log(10/ε) |", "lowest arm agreement")
	if err != nil {
		return "", err
	}
	var above []float64
	for _, v := range vals {
		if v >= 99 {
			above = append(above, v)
		}
	}
	if len(above) == 0 {
		return "", fmt.Errorf("no ε with its lowest agreement at 99 %% or more")
	}
	n, _ := failing(strings.Repeat("**does not hold**", len(above)))
	lo, _ := minMax(above)
	return fmt.Sprintf("%.2f %% at %s", lo, n), nil
}

// threeOfFour is the figure "+P % / +N %" of the seed-101 sensitivity run
// on normal instances without its hardest instance (the one where FCB's
// regret is largest): P-FCB's and Non-federated's mean regret over FCB's.
func threeOfFour(text string) (string, error) {
	rows, err := csvRows(text)
	if err != nil {
		return "", err
	}
	regret := map[string]map[string]float64{} // algorithm → instance → regret
	for _, r := range rows {
		if r["setting"] != "fcb_alg1+zeta=0.5" || r["family"] != "normal" || r["agents"] != "10" {
			continue
		}
		if r["algorithm"] == "pfcb" && r["epsilon"] != "1" {
			continue
		}
		v, err := strconv.ParseFloat(r["regret_per_agent"], 64)
		if err != nil {
			return "", err
		}
		if regret[r["algorithm"]] == nil {
			regret[r["algorithm"]] = map[string]float64{}
		}
		regret[r["algorithm"]][r["instance"]] = v
	}
	fcb := regret["fcb"]
	if len(fcb) < 2 {
		return "", fmt.Errorf("fewer than 2 instances of FCB")
	}
	var instances []string
	for i := range fcb {
		instances = append(instances, i)
	}
	sort.Slice(instances, func(a, b int) bool { return fcb[instances[a]] < fcb[instances[b]] })
	instances = instances[:len(instances)-1]
	mean := func(alg string) float64 {
		var s float64
		for _, i := range instances {
			s += regret[alg][i]
		}
		return s / float64(len(instances))
	}
	pct := func(alg string) string { return fmt.Sprintf("%+.0f %%", 100*(mean(alg)/mean("fcb")-1)) }
	return pct("pfcb") + " / " + pct("non_federated"), nil
}

// csvCells is the figure format fed the columns of the one row of a CSV
// file whose columns have the values in where ("col=value,…"); a column
// "name*100" is multiplied by 100, a column "name," is a whole number
// written with thousands separators (for a %s).
func csvCells(where, format string, columns ...string) func(string) (string, error) {
	return func(text string) (string, error) {
		rows, err := csvRows(text)
		if err != nil {
			return "", err
		}
		var found map[string]string
	rows:
		for _, r := range rows {
			for _, kv := range strings.Split(where, ",") {
				k, v, _ := strings.Cut(kv, "=")
				if r[k] != v {
					continue rows
				}
			}
			if found != nil {
				return "", fmt.Errorf("more than one row where %s", where)
			}
			found = r
		}
		if found == nil {
			return "", fmt.Errorf("no row where %s", where)
		}
		args := make([]any, len(columns))
		for i, c := range columns {
			if n, ok := strings.CutSuffix(c, ","); ok {
				if _, err := strconv.Atoi(found[n]); err != nil {
					return "", fmt.Errorf("row where %s, column %q: %q is not a whole number", where, n, found[n])
				}
				args[i] = withThousands(found[n])
				continue
			}
			name, scale := c, 1.0
			if n, ok := strings.CutSuffix(c, "*100"); ok {
				name, scale = n, 100
			}
			v, err := strconv.ParseFloat(found[name], 64)
			if err != nil {
				return "", fmt.Errorf("row where %s, column %q: %q is not a number", where, name, found[name])
			}
			args[i] = v * scale
		}
		return fmt.Sprintf(format, args...), nil
	}
}

// smallerGaps is the (empty) figure of P-FCB's EXP1 where P-FCB's and
// Non-federated's regret over FCB's are below the paper's on every family.
func smallerGaps(text string) (string, error) {
	rows, err := table(text, "| instances | FCB |")
	if err != nil {
		return "", err
	}
	for _, r := range rows {
		ours := numbers(r["P-FCB vs FCB"] + " " + r["Non-fed. vs FCB"])
		paper := numbers(r["paper"])
		if len(ours) != 2 || len(paper) != 2 {
			return "", fmt.Errorf("%s instances: no two gaps and the paper's two in %v", r["instances"], r)
		}
		for i := range ours {
			if ours[i] >= paper[i] {
				return "", fmt.Errorf("%s instances: a gap of %v %% is not below the paper's %v %%", r["instances"], ours[i], paper[i])
			}
		}
	}
	return "", nil
}

// csvRows reads a CSV file with a header into one map a row.
func csvRows(text string) ([]map[string]string, error) {
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("an empty CSV file")
	}
	var rows []map[string]string
	for _, rec := range recs[1:] {
		r := map[string]string{}
		for i, name := range recs[0] {
			if i < len(rec) {
				r[name] = rec[i]
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// numbers returns the numbers in s, in order.
func numbers(s string) []float64 {
	var out []float64
	for _, f := range regexp.MustCompile(`-?\d+(\.\d+)?`).FindAllString(s, -1) {
		v, _ := strconv.ParseFloat(f, 64)
		out = append(out, v)
	}
	return out
}

// minMax returns the smallest and the largest of vals.
func minMax(vals []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo, hi
}
