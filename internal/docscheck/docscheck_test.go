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
// the groups; "%%" for a per cent sign, and "[...]" between pieces the
// document says in this order with other words between them).
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
		"docs/performance.md", "(at most %s %%)", false},
	{"results/samba/samba_results.md", "- at N = 10⁵ and K = 100", `median ([\d.]+) min`,
		"docs/performance.md", "about %s min", false},
	{"results/samba/samba_results.md", "Command: ", `on (\d+) workers, GOMAXPROCS (\d+),`,
		"docs/performance.md", "(`--workers %s`, GOMAXPROCS %s: 72 sessions", false},
	{"results/samba/samba_results.md", "# SAMBA: Figure 8", `K = (\d+), (\d+), N up to (\d+), (\d+) runs per point`,
		"docs/performance.md", "--runs %[4]s --budget %[3]s` [...] (K = %[1]s and %[2]s; at K = 100 also N/4 and N/2)", false},
	{"results/samba/samba_results.md", "- Theorem 4: O(NK) AES-GCM operations", `\*\*holds\*\* \(every run: AES-GCM operations = (\d)K·`,
		"docs/performance.md", "Theorem 4's counts hold exactly (%sK AES-GCM operations per step and iteration", false},
	{"results/samba/samba_results.md", "- Theorem 4: O(NK) messages", `\*\*holds\*\* \(every run: (\(2K \+ 2\))·`,
		"docs/performance.md", "%s messages per step and iteration", false},
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
	{"results/pfcb/pfcb_results.md", "- regret FCB < P-FCB(ε=1) < Non-federated on uniform instances:", `means (\d+), (\d+), (\d+);`,
		"docs/protocols/pfcb.md", "uniform %s < %s < %s", true},
	{"results/pfcb/pfcb_results.md", "- regret FCB < P-FCB(ε=1) < Non-federated on normal instances:", `means (\d+), (\d+), (\d+);`,
		"docs/protocols/pfcb.md", "normal %s < %s < %s", true},
	{"results/pfcb/pfcb_results.md", "- FRR falls as ε grows on uniform instances:", `\[([\d.]+) .* ([\d.]+)\]`,
		"docs/protocols/pfcb.md", "uniform %s → %s", false},

	// SAMBA's committed run, the verdicts docs/performance.md sums up.
	{"results/samba/samba_results.md", "- Theorem 2:", `\*\*holds\*\* \((\d+) of (\d+) runs`,
		"docs/performance.md", "What holds: %s of %s sessions exact (Theorem 2)", false},
	{"results/samba/samba_results.md", "- the execution time is linear in N:", `\*\*holds\*\*`,
		"docs/performance.md", "the time is linear in N (R²", false},
	{"results/samba/samba_results.md", "- the execution time is linear in N:", `–([\d.]+) ms per step`,
		"docs/performance.md", "%s being Pursuit", false},
	{"results/samba/samba_results.md", "- the time grows more steeply with K than with N", `\*\*holds\*\*`,
		"docs/performance.md", "it grows more steeply with K than with N", false},
	{"results/samba/samba_results.md", "- Theorem 4: O(NK) AES-GCM operations", `\*\*holds\*\*`,
		"docs/performance.md", "Theorem 4's counts hold exactly", false},
	{"results/samba/samba_results.md", "- Theorem 4: K Paillier encryptions", `\*\*holds\*\*`,
		"docs/performance.md", "Theorem 4's counts hold exactly", false},
	{"results/samba/samba_results.md", "- Theorem 4: O(NK) messages", `\*\*holds\*\*`,
		"docs/performance.md", "Theorem 4's counts hold exactly", false},
	{"results/samba/samba_results.md", "- Pursuit takes about double", `\*\*holds\*\*`,
		"docs/performance.md", "What holds: [...] Pursuit costs [...] What does not hold:", false},
	{"results/samba/samba_results.md", "- Thompson Sampling is the slowest", `\*\*not resolved\*\*`,
		"docs/performance.md", "Not resolved at 3 runs: whether\nThompson is the slowest of the one-iteration algorithms", false},
	{"results/samba/samba_results.md", "- Comp is the most time-consuming node:", `\*\*does not hold\*\*`,
		"docs/performance.md", "comp is not always the busiest\nnode", false},
	{"results/samba/samba_results.md", "- for the same N, Comp's share", `\*\*holds\*\* .*\(threshold: within (\d+) points\)`,
		"docs/performance.md", "its share stays within %s points from K = 10 to 100", false},
	{"results/samba/samba_results.md", "- SAMBA's overhead over the standard algorithms", `\*\*does not hold\*\* .*\(threshold ×(\d+)\)`,
		"docs/performance.md", "What does not hold: the overhead\nover the standard algorithm is ×16–×154, not ≤ ×%s", false},
	{"results/samba/samba_results.md", "- at N = 10⁵ and K = 100", `\*\*does not hold\*\*`,
		"docs/performance.md", "not 15 minutes", false},
	{"results/samba/samba_results.md", "- ε-greedy with a fixed ε is the fastest:", `\*\*not resolved\*\*`,
		"docs/performance.md", "whether\nε-greedy is the fastest", false},
	{"results/samba/samba_results.md", "- Thompson Sampling always produces the best cumulative reward:", `\*\*not resolved\*\* .*K = 100, N = 5000: pursuit \(`,
		"docs/performance.md", "whether Thompson always gives the best reward (Pursuit's mean is higher\nat K = 100, N = 5,000)", false},
	{"results/samba/samba_results.md", "- the controller's share is roughly", `\*\*does not hold\*\*`,
		"docs/performance.md", "not about the same", false},
	{"results/samba/samba_results.md", "- the data customer's share is negligible:", `\*\*holds\*\* .*\(threshold (\d+) %\)`,
		"docs/performance.md", "stays under\nthe %s %% the check calls negligible", false},
	// The K sweep's verdicts, in the same section.
	{"results/samba/k_sweep/samba_results.md", "- Theorem 2:", `\*\*holds\*\* \((\d+) of (\d+) runs`,
		"docs/performance.md", "%s of %s sessions are exact", false},
	{"results/samba/k_sweep/samba_results.md", "- the execution time is linear in K:", `\*\*does not hold\*\*`,
		"docs/performance.md", "The time is **not**\nlinear by the check's measure there", false},
	{"results/samba/k_sweep/samba_results.md", "- the execution time is linear in N:", `\*\*does not hold\*\* \(.*R² ≥ ([\d.]+)`,
		"docs/performance.md", "nor in N (R² ≥ %s)", false},
	{"results/samba/k_sweep/samba_results.md", "- for the same N, Comp's share", `\*\*holds\*\* .*\(threshold: within (\d+) points\)`,
		"docs/performance.md", "holds: it\nmoves by at most 3.3 points between K = 10 and 100, within the %s the check allows", false},
	{"results/samba/k_sweep/samba_results.md", "- Pursuit takes about double", `\*\*holds\*\* .*\(threshold (×[\d.]+–×[\d.]+)\)`,
		"docs/performance.md", "is within the %s the check allows", false},

	// docs/papers.md's summaries.
	{"results/samba/samba_results.md", "- Theorem 4: O(NK) AES-GCM operations", `\*\*holds\*\* \(every run`,
		"docs/papers.md", "are checked exactly, run by run", false},
	{"results/samba/samba_results.md", "- Theorem 4: K Paillier encryptions", `\*\*holds\*\* \(every run`,
		"docs/papers.md", "are checked exactly, run by run", false},
	{"results/samba/samba_results.md", "- Theorem 4: O(NK) messages", `\*\*holds\*\* \(every run`,
		"docs/papers.md", "are checked exactly, run by run", false},
	{"results/pfcb/pfcb_results.md", "- regret FCB < P-FCB(ε=1) < Non-federated on uniform instances:", `\*\*holds\*\*`,
		"docs/papers.md", "the ordering holds, the magnitudes are smaller", false},
	{"results/pfcb/pfcb_results.md", "- regret FCB < P-FCB(ε=1) < Non-federated on normal instances:", `\*\*not resolved\*\*`,
		"docs/papers.md", "on normal instances in the means, not beyond the runs' spread", false},

	// The README's summary of SAMBA's and P-FCB's experiments.
	{"results/samba/samba_results.md", "- Theorem 2:", `\*\*holds\*\*`,
		"README.md", "SAMBA returns exactly the standard algorithms' rewards and arm sequences in every run", false},
	{"results/samba/k_sweep/samba_results.md", "- Theorem 2:", `\*\*holds\*\*`,
		"README.md", "SAMBA returns exactly the standard algorithms' rewards and arm sequences in every run", false},
	{"results/samba/samba_results.md", "- the execution time is linear in N:", `\*\*holds\*\*`,
		"README.md", "with time linear in N and K", false},
	{"results/samba/k_sweep/samba_results.md", "- the execution time is linear in N:", `\*\*does not hold\*\*`,
		"README.md", "the K sweep's timings miss the\ncheck", false},
	{"results/samba/samba_results.md", "- SAMBA's overhead over the standard algorithms", `\*\*does not hold\*\*`,
		"README.md", "its overhead over compiled Go baselines is above the paper's order of magnitude", false},
	{"results/samba/k_sweep/samba_results.md", "- SAMBA's overhead over the standard algorithms", `\*\*does not hold\*\*`,
		"README.md", "its overhead over compiled Go baselines is above the paper's order of magnitude", false},
	{"results/pfcb/pfcb_results.md", "- regret FCB < P-FCB(ε=1) < Non-federated on uniform instances:", `\*\*holds\*\*`,
		"README.md", "P-FCB keeps the paper's ordering", false},
	{"results/pfcb/pfcb_results.md", "- regret FCB < P-FCB(ε=1) < Non-federated on normal instances:", `\*\*not resolved\*\*`,
		"README.md", "on normal instances only in the means", false},

	// The BAI and P-FCB grids' committed runs, in docs/performance.md.
	{"results/bai/bai_results.md", "650 simulated sessions", `^(\d+) simulated sessions in (\d+)m(\d+)s on (\d+) worker`,
		"docs/performance.md", "(the committed run: %s sessions in %s min %s s on %s worker)", false},
	{"results/bai-problem2/bai_results.md", "650 simulated sessions", `^(\d+) simulated sessions in (\d+)m(\d+)s on (\d+) worker`,
		"docs/performance.md", "the committed run: %s sessions in %s min %s s on %s worker) DP-MASE's epochs", false},
	{"results/pfcb/pfcb_results.md", "720 simulated sessions", `^(\d+) simulated sessions in (\d+)m(\d+)s on (\d+) workers`,
		"docs/performance.md", "the committed run: %s sessions in %s min %s s on %s workers); every claim", false},

	// P-FCB's EXP1–3 in docs/protocols/pfcb.md.
	{"results/pfcb/pfcb_results.md", "## EXP1 » | uniform | ", `\| ([+-]\d+)% \| ([+-]\d+)% \| ([+-]\d+)%, ([+-]\d+)% \|$`,
		"docs/protocols/pfcb.md", "(P-FCB %s %% and Non-federated %s %% over FCB on uniform instances, the paper %s %% and %s %%)", false},
	{"results/pfcb/pfcb_results.md", "- FRR falls as ε grows on normal instances:", `\*\*holds\*\* \(\[([\d.]+) .* ([\d.]+)\]`,
		"docs/protocols/pfcb.md", "normal %s → %s", false},
	{"results/pfcb/pfcb_results.md", "- FRR falls as ε grows on uniform instances:", `\*\*holds\*\* \(\[[\d.]+ [\d.]+ [\d.]+ [\d.]+ ([\d.]+) ([\d.]+)\]`,
		"docs/protocols/pfcb.md", "is uniform %s and %s", false},
	{"results/pfcb/pfcb_results.md", "- FRR falls as ε grows on normal instances:", `\*\*holds\*\* \(\[[\d.]+ [\d.]+ [\d.]+ [\d.]+ ([\d.]+) ([\d.]+)\]`,
		"docs/protocols/pfcb.md", "normal %s and %s; FRR falls at every step of ε on both families", false},
	{"results/pfcb/pfcb_results.md", "- per-agent regret falls as n grows on uniform instances:", `\*\*holds\*\*`,
		"docs/protocols/pfcb.md", "per-agent regret falls at every step of n on both families", false},
	{"results/pfcb/pfcb_results.md", "- per-agent regret falls as n grows on normal instances:", `\*\*not resolved\*\*`,
		"docs/protocols/pfcb.md", "not resolved on normal ones", false},
	{"results/pfcb/pfcb_results.md", "- FRR falls as ε grows on uniform instances, paired by instance:", `\*\*holds\*\*`,
		"docs/protocols/pfcb.md", "every claim holds there too", false},
	{"results/pfcb/pfcb_results.md", "- FRR falls as ε grows on normal instances, paired by instance:", `\*\*holds\*\*`,
		"docs/protocols/pfcb.md", "every claim holds there too", false},
	{"results/pfcb/pfcb_results.md", "- per-agent regret falls as n grows on uniform instances, paired by instance:", `\*\*holds\*\*`,
		"docs/protocols/pfcb.md", "every claim holds there too", false},
	{"results/pfcb/pfcb_results.md", "- per-agent regret falls as n grows on normal instances, paired by instance:", `\*\*holds\*\*`,
		"docs/protocols/pfcb.md", "every claim holds there too", false},
	// P-FCB's sensitivity study, "The gap to the paper's magnitudes".
	{"results/pfcb/README.md", "| `pfcb_sensitivity.md`", `: (\d+) settings of the choices .*, (\d+) instances × (\d+) run per family`,
		"docs/protocols/pfcb.md", "%s settings, each changing one open choice or a combination, %s instances × %s run per family", false},
	{"results/pfcb/pfcb_sensitivity.md", "## uniform instances » | defaults |", `^\| defaults \| [^|]+ \| (\d+) \|`,
		"docs/protocols/pfcb.md", "(uniform %s → ", true},
	{"results/pfcb/pfcb_sensitivity.md", "## uniform instances » | alg1 |", `^\| alg1 \| [^|]+ \| (\d+) \|`,
		"docs/protocols/pfcb.md", "→ %s) to a half", true},
	{"results/pfcb/pfcb_sensitivity.md", "## normal instances » | defaults |", `^\| defaults \| [^|]+ \| (\d+) \|`,
		"docs/protocols/pfcb.md", "(normal %s → ", true},
	{"results/pfcb/pfcb_sensitivity.md", "## normal instances » | alg1 |", `^\| alg1 \| [^|]+ \| (\d+) \|`,
		"docs/protocols/pfcb.md", "→ %s) while P-FCB", true},
	{"results/pfcb/fcb_algorithm1/pfcb_sensitivity.md", "## uniform instances » | fcb_alg1 |", `\| ([+-]\d+)% \| ([+-]\d+)% \|`,
		"docs/protocols/pfcb.md", "the gaps become %s %% / %s %% (uniform)", false},
	{"results/pfcb/fcb_algorithm1/pfcb_sensitivity.md", "## normal instances » | fcb_alg1 |", `\| ([+-]\d+)% \| ([+-]\d+)% \|`,
		"docs/protocols/pfcb.md", "and %s %% / %s %% (normal)", false},
	{"results/pfcb/pfcb_sensitivity.md", "## uniform instances » | zeta=0.1 |", `\| ([+-]\d+)% \| ([+-]\d+)% \|`,
		"docs/protocols/pfcb.md", "the gaps shrink to %s %% / %s %%", false},
	{"results/pfcb/fcb_algorithm1/pfcb_sensitivity.md", "Closest on both families together:", `uniform ([+-]\d+)% / ([+-]\d+)%, normal ([+-]\d+)% / ([+-]\d+)%`,
		"docs/protocols/pfcb.md", "uniform %s %% / %s %% (paper +136 %% / +233 %%), normal %s %% / %s %%", false},
	{"results/pfcb/fcb_algorithm1/pfcb_sensitivity.md", "- EXP2 (uniform): regret falls as ε grows", `\*\*holds\*\*`,
		"docs/protocols/pfcb.md", "regret falls as ε goes 0.25 → 1 → 4", false},
	{"results/pfcb/fcb_algorithm1/pfcb_sensitivity.md", "- EXP2 (normal): regret falls as ε grows", `\*\*holds\*\*`,
		"docs/protocols/pfcb.md", "regret falls as ε goes 0.25 → 1 → 4", false},
	{"results/pfcb/fcb_algorithm1/pfcb_sensitivity.md", "- EXP2 (uniform): FRR < 1 at ε = 1:", `\*\*holds\*\*`,
		"docs/protocols/pfcb.md", "FRR < 1 at ε = 1", false},
	{"results/pfcb/fcb_algorithm1/pfcb_sensitivity.md", "- EXP2 (normal): FRR < 1 at ε = 1:", `\*\*holds\*\*`,
		"docs/protocols/pfcb.md", "FRR < 1 at ε = 1", false},
	{"results/pfcb/fcb_algorithm1/pfcb_sensitivity.md", "- EXP3 (uniform): per-agent regret lower with n = 10 than n = 2:", `\*\*holds\*\*`,
		"docs/protocols/pfcb.md", "per-agent regret lower at n = 10 than n = 2", false},
	{"results/pfcb/fcb_algorithm1/pfcb_sensitivity.md", "- EXP3 (normal): per-agent regret lower with n = 10 than n = 2:", `\*\*holds\*\*`,
		"docs/protocols/pfcb.md", "per-agent regret lower at n = 10 than n = 2", false},
	{"results/pfcb/fcb_algorithm1_seed101/pfcb_sensitivity.md", "Closest on both families together:", `uniform ([+-]\d+)% / ([+-]\d+)%, normal ([+-]\d+)% / ([+-]\d+)%`,
		"docs/protocols/pfcb.md", "uniform family reproduces again (%s %% / %s %%); [...] means to %s %% / %s %%", false},
	{"results/pfcb/fcb_algorithm1_seed101/pfcb_sensitivity.md", "- EXP3 (normal): per-agent regret lower with n = 10 than n = 2:", `\*\*does not hold\*\*`,
		"docs/protocols/pfcb.md", "n = 10 above n = 2", false},
	{"results/pfcb/pfcb_sensitivity.md", "## uniform instances » | solo_explore |", `\| [+-]\d+% \| ([+-]\d+)% \|`,
		"docs/protocols/pfcb.md", "overshoots (%s %% uniform)", false},
	{"results/pfcb/pfcb_sensitivity.md", "## uniform instances » | defaults |", `\| ([+-]\d+)%, ([+-]\d+)% \| \d+/\d+/\d+ \|`,
		"docs/protocols/pfcb.md", "widens today's gaps to %s %% / %s %% (uniform)", false},

	// The contextual bandit's experiments, docs/protocols/mpccb.md.
	{"results/mpccb/mpccb_results.md", "## Figure 1 » | 0.05 |", `\| ([\d.]+) \| [\d.]+ % \|$`,
		"docs/protocols/mpccb.md", "%s at ε = 0.05", false},
	{"results/mpccb/mpccb_results.md", "## Figure 1 » | 0.02 |", `\| ([\d.]+) \| ([\d.]+ %) \|$`,
		"docs/protocols/mpccb.md", "%[1]s at ε = 0.02, [...] %[2]s at ε = 0.02", false},
	{"results/mpccb/mpccb_results.md", "- the private learner pulls the plaintext reference's arm", `\*\*does not hold\*\*`,
		"docs/protocols/mpccb.md", "so the claim \"≥ 99 %% in every run\" does not hold there", false},
	{"results/mpccb/mpccb_results.md", "- the private learner is nearly 500× slower", `against ([\d.]+ µs) per step`,
		"docs/protocols/mpccb.md", "plaintext step (%s;", false},
	{"results/mpccb/mpccb_results.md", "Every session:", `the first T = (\d+) training images\), \|A\| = \d+, P = \d+, (\d+) runs per ε`,
		"docs/protocols/mpccb.md", "(%s Fashion-MNIST steps, %s runs × 7 values of ε", true},

	// The run sizes the docs name beside the committed runs.
	{"results/pfcb/pfcb_results.md", "# P-FCB:", `T = (\d+), m = (\d+), (\d+) instances × (\d+) runs per family`,
		"docs/protocols/pfcb.md", "(`results/pfcb/pfcb_results.md`, T = %s, n = 10, m = %s, %s instances × %s runs per family)", true},
	{"results/pfcb/pfcb_results.md", "# P-FCB:", `(\d+) instances × (\d+) runs per family`,
		"docs/performance.md", "(uniform and normal instances × %s instances × %s runs; 720 sessions of T = 100,000)", false},
	{"results/bai/bai_results.md", "# Multi-agent BAI:", `(\d+) runs per point`,
		"docs/performance.md", "× %s runs = 650 sessions)", false},
	// BAI's epochs, docs/protocols/bai.md.
	{"results/bai-problem2/bai_results.md", "**Why DP-MASE's curves jump.**", `each epoch is (\d–\d) times as long as the one before`,
		"docs/protocols/bai.md", "each epoch %s times as long as the one before", false},
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
		want := fmt.Sprintf(q.format, args...)
		if !says(read(q.doc), want) {
			t.Errorf("%s does not say %q, as %s states it in its line %q (%q)", q.doc, oneLine(want), q.results, q.line, m[0])
		}
	}
}

// says reports whether doc says want, white space folded: want's pieces
// between "[...]" markers in this order, anything between them.
func says(doc, want string) bool {
	doc = oneLine(doc)
	for _, piece := range strings.Split(want, "[...]") {
		piece = oneLine(piece)
		i := strings.Index(doc, piece)
		if i < 0 {
			return false
		}
		doc = doc[i+len(piece):]
	}
	return true
}

// lineOf returns the first line of text that starts with prefix, or else
// contains it. A prefix "SECTION » LINE" looks for LINE only after the
// first line that starts with (or contains) SECTION: a results file's
// tables repeat their row names.
func lineOf(text, prefix string) string {
	lines := strings.Split(text, "\n")
	if section, line, ok := strings.Cut(prefix, " » "); ok {
		start := lineOf(text, section)
		if start == "" {
			return ""
		}
		for i, l := range lines {
			if l == start {
				return lineOf(strings.Join(lines[i+1:], "\n"), line)
			}
		}
	}
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
