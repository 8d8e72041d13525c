package docscheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository, from this package's directory.
const root = "../.."

// quote is one figure a document quotes from a results file: the line of
// the results file that starts with (or contains) line, the figure pattern
// matches in it (its groups), and how the document writes it (format, fed
// the groups).
type quote struct {
	results, line string
	pattern       string
	doc, format   string
	// thousands writes the groups' whole numbers with thousands
	// separators (13413 as 13,413), as the document does.
	thousands bool
}

// quotes are the figures the docs take from results/. Add one with every
// figure quoted from a results file.
var quotes = []quote{
	// SAMBA's Figure 8, the committed run, in docs/performance.md.
	{"results/samba/samba_results.md", "Command: ", `(\d+) sessions in (\d+)m(\d+)s`,
		"docs/performance.md", "%s sessions in %s min %s s", false},
	{"results/samba/samba_results.md", "- the execution time is linear in N:", `R² ≥ ([\d.]+)`,
		"docs/performance.md", "R² ≥ %s", false},
	{"results/samba/samba_results.md", "- the execution time is linear in N:", `([\d.]+–[\d.]+) ms per step`,
		"docs/performance.md", "%s ms a step", false},
	{"results/samba/samba_results.md", "- SAMBA's overhead over the standard algorithms", `(×[\d.]+–×[\d.]+)`,
		"docs/performance.md", "overhead\nover the standard algorithm is %s", false},
	{"results/samba/samba_results.md", "- Pursuit takes about double", `(×[\d.]+–×[\d.]+)`,
		"docs/performance.md", "Pursuit costs %s", false},
	{"results/samba/samba_results.md", "- Comp is the most time-consuming node:", `(×[\d.]+–×[\d.]+)`,
		"docs/performance.md", "(%s\nthe controller)", false},
	{"results/samba/samba_results.md", "- the controller's share is roughly", `(×[\d.]+–×[\d.]+)`,
		"docs/performance.md", "%s as much as one data owner", false},
	{"results/samba/samba_results.md", "- the data customer's share is negligible:", `at most ([\d.]+) %`,
		"docs/performance.md", "reaches %s %%", false},
	{"results/samba/samba_results.md", "- at N = 10⁵ and K = 100", `median ([\d.]+) min`,
		"docs/performance.md", "about %s min", false},
	// The K sweep, in the same section.
	{"results/samba/k_sweep/samba_results.md", "Command: ", `(\d+) sessions in (\d+)m(\d+)s`,
		"docs/performance.md", "%s sessions in %s min %s s", false},
	{"results/samba/k_sweep/samba_results.md", "- the execution time is linear in K:", `R² ≥ ([\d.]+)`,
		"docs/performance.md", "(R² ≥ %s)", false},
	{"results/samba/k_sweep/samba_results.md", "- SAMBA's overhead over the standard algorithms", `(×[\d.]+–×[\d.]+)`,
		"docs/performance.md", "is %s.", false},
	{"results/samba/k_sweep/samba_results.md", "- Pursuit takes about double", `(×[\d.]+–×[\d.]+)`,
		"docs/performance.md", "Pursuit's %s", false},
	// The contextual bandit's experiments, in docs/protocols/mpccb.md.
	{"results/mpccb/mpccb_results.md", "- the private learner pulls the plaintext reference's arm", `lowest agreement ([\d.]+ %)`,
		"docs/protocols/mpccb.md", "%s at ε = 0.05", false},
	{"results/mpccb/mpccb_results.md", "- the private learner is nearly 500× slower", `(\d+)× \(([\d.]+) ms`,
		"docs/protocols/mpccb.md", "and %[2]s ms, %[1]s× a Go", false},
	{"results/mpccb/mpccb_results.md", "- at most 45 communication rounds per step", `\((\d+) rounds per step\)`,
		"docs/protocols/mpccb.md", "takes %s rounds", false},
	{"results/mpccb/mpccb_results.md", "Command: ", `in (\d+)m(\d+)s`,
		"docs/protocols/mpccb.md", "took %s min %s s", false},
	// The README's summary of the contextual bandit: a claim that must
	// hold at every ε of the committed run (a format without verbs is
	// quoted as it is, once the results line matches the pattern).
	{"results/mpccb/mpccb_results.md", "- ε = 0.01: the private learner's average reward is within 0.01", `\*\*holds\*\*`,
		"README.md", "within 0.01 of its plaintext reference's in every run", false},
	{"results/mpccb/mpccb_results.md", "- ε = 0.05: the private learner's average reward is within 0.01", `\*\*holds\*\*`,
		"README.md", "within 0.01 of its plaintext reference's in every run", false},
	{"results/mpccb/mpccb_results.md", "- ε = 0.1: the private learner's average reward is within 0.01", `\*\*holds\*\*`,
		"README.md", "within 0.01 of its plaintext reference's in every run", false},
	{"results/mpccb/mpccb_results.md", "- ε = 0.2: the private learner's average reward is within 0.01", `\*\*holds\*\*`,
		"README.md", "within 0.01 of its plaintext reference's in every run", false},
	// P-FCB's EXP1, in docs/protocols/pfcb.md.
	{"results/pfcb/pfcb_results.md", "- regret FCB < P-FCB(ε=1) < Non-federated on uniform instances:", `\((\d+) < (\d+) < (\d+)\)`,
		"docs/protocols/pfcb.md", "uniform %s < %s < %s", true},
	{"results/pfcb/pfcb_results.md", "- regret FCB < P-FCB(ε=1) < Non-federated on normal instances:", `\((\d+) < (\d+) < (\d+)\)`,
		"docs/protocols/pfcb.md", "normal %s < %s < %s", true},
	{"results/pfcb/pfcb_results.md", "- FRR falls as ε grows on uniform instances:", `\[([\d.]+) .* ([\d.]+)\]`,
		"docs/protocols/pfcb.md", "uniform %s → %s", false},
}

// TestDocsQuoteTheResults: every figure in quotes reads in its document as
// its results file states it.
func TestDocsQuoteTheResults(t *testing.T) {
	files := map[string]string{}
	read := func(name string) string {
		if s, ok := files[name]; ok {
			return s
		}
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
		return files[name]
	}
	for _, q := range quotes {
		line := lineOf(read(q.results), q.line)
		if line == "" {
			t.Errorf("%s has no line starting %q", q.results, q.line)
			continue
		}
		m := regexp.MustCompile(q.pattern).FindStringSubmatch(line)
		if m == nil {
			t.Errorf("%s: the line %q does not match %s (a figure or a verdict the docs quote)", q.results, q.line, q.pattern)
			continue
		}
		args := make([]any, len(m)-1)
		for i, g := range m[1:] {
			if q.thousands {
				g = withThousands(g)
			}
			args[i] = g
		}
		want := q.format
		if strings.Contains(q.format, "%") {
			want = fmt.Sprintf(q.format, args...)
		}
		if !strings.Contains(oneLine(read(q.doc)), oneLine(want)) {
			t.Errorf("%s does not say %q, as %s states it (%q)", q.doc, oneLine(want), q.results, m[0])
		}
	}
}

// lineOf returns the first line of text that starts with prefix, or else
// contains it.
func lineOf(text, prefix string) string {
	lines := strings.Split(text, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	for _, l := range lines {
		if strings.Contains(l, prefix) {
			return l
		}
	}
	return ""
}

// withThousands writes whole number n with a comma every three digits.
func withThousands(n string) string {
	for i := len(n) - 3; i > 0; i -= 3 {
		n = n[:i] + "," + n[i:]
	}
	return n
}

// oneLine folds runs of white space, line breaks included, into one space:
// documents wrap their lines anywhere.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
