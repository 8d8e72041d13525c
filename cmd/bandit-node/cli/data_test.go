package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
)

// TestDataMPCCBParties checks that data mpccb accepts exactly the numbers of
// feature parties a session does (2..mpccb.MaxParties): the files of any
// other number could never be used.
func TestDataMPCCBParties(t *testing.T) {
	tests := []struct {
		args []string
		want string // "" when accepted
	}{
		{[]string{"--parties", "1"}, "--parties 1: a session has 2..16 feature parties"},
		{[]string{"--parties", "0"}, "--parties 0: a session has 2..16 feature parties"},
		{[]string{"--parties", "-2"}, "--parties -2"},
		{[]string{"--parties", "17"}, "--parties 17: a session has 2..16 feature parties"},
		{[]string{"--parties", "20"}, "--parties 20"},
		{[]string{"--steps", "-1"}, "--steps -1: must be 0 (all contexts) or more"},
		{[]string{"--parties", "2"}, ""},
		{[]string{"--parties", "16"}, ""},
	}
	if mpccb.MaxParties != 16 {
		t.Fatalf("mpccb.MaxParties is %d; update the messages above", mpccb.MaxParties)
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			// An empty --source: an accepted command fails only when it
			// looks for the Fashion-MNIST files, quickly, with no data set
			// installed.
			out, source := filepath.Join(t.TempDir(), "data"), t.TempDir()
			args := append([]string{"data", "mpccb", "--out", out, "--source", source, "--dataset", dataset.Synthetic, "--arms", "3", "--steps", "40"}, tt.args...)
			_, _, err := run(t, args...)
			if tt.want == "" {
				if err == nil || ExitCode(err) != 1 || !strings.Contains(err.Error(), "Fashion-MNIST file") {
					t.Errorf("err = %v (exit %d), want the flags accepted and the missing data set reported", err, ExitCode(err))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || ExitCode(err) != 2 {
				t.Errorf("err = %v (exit %d), want a usage error with %q", err, ExitCode(err), tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused data mpccb wrote %s (%v)", out, err)
			}
		})
	}
}

// irisTable is the example table, seen from this package's directory.
var irisTable = filepath.Join(repoRoot, "examples", "data", "iris.csv")

// TestDataMPCCBCSV runs data mpccb --csv on the example table and has the
// mpccb family read the files back as a daemon does: DecodeLocal on each
// role's [local.mpccb.*] table, then the role's construction, which reads
// and checks the file. What the roles read is what dataset.LoadCSV gives,
// to the bit.
func TestDataMPCCBCSV(t *testing.T) {
	if dataset.MaxClasses != mpccb.MaxArms {
		t.Fatalf("dataset.MaxClasses %d, mpccb.MaxArms %d: a table's classes are the session's arms", dataset.MaxClasses, mpccb.MaxArms)
	}
	out := filepath.Join(t.TempDir(), "iris-data")
	stdout, stderr, err := run(t, "data", "mpccb", "--csv", irisTable, "--label", "species", "--pca", "3", "--normalize", "--parties", "2", "--steps", "250", "--out", out)
	if err != nil {
		t.Fatalf("data mpccb --csv: %v\n%s", err, stderr)
	}
	for _, w := range []string{"wrote 2 feature-party files and rewards.csv into " + out, "250 contexts of PCA to 3 components", "unit norm, 3 arms",
		"arms = 3, dimensions = 3, steps = 250 or fewer"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
	}
	if stderr != "" {
		t.Errorf("a quick data mpccb wrote to stderr: %q", stderr)
	}
	want, err := dataset.LoadCSV(irisTable, dataset.TableOptions{Label: "species", PCA: 3, Normalize: true}, 250)
	if err != nil {
		t.Fatal(err)
	}

	fam := mpccb.NewFamily()
	params, err := fam.ParseParams(map[string]any{"steps": int64(250), "arms": int64(3), "dimensions": int64(3)})
	if err != nil {
		t.Fatal(err)
	}
	a := protocol.Assignment{Roles: map[string][]string{mpccb.RoleFeature: {"fp1", "fp2"}, mpccb.RolePuller: {"puller"},
		mpccb.RoleReceiver: {"receiver"}, mpccb.RoleDealer: {"dealer"}}}
	newRole := func(role string, index int, key, file string) {
		t.Helper()
		// A relative name in the table is taken from the config's
		// directory, as a daemon's is.
		table := &protocol.LocalTable{Key: protocol.LocalKey(mpccb.Name, role), Raw: map[string]any{key: file}, Dir: out}
		local, err := fam.DecodeLocal(role, table)
		if err != nil {
			t.Fatalf("%s: %v", table.Key, err)
		}
		if c, ok := local.(protocol.LocalChecker); ok {
			if err := c.CheckLocal(); err != nil {
				t.Fatalf("%s: %v", table.Key, err)
			}
		}
		cfg := protocol.RoleConfig{SessionID: "csv", Self: protocol.Party{Role: role, Index: index}, Assignment: a,
			Params: params, Local: local, Rand: rand.Reader, Logger: slog.New(slog.DiscardHandler)}
		if _, err := fam.NewRole(cfg); err != nil {
			t.Fatalf("%s[%d] on %s: %v", role, index, file, err)
		}
	}
	for p, cols := range dataset.Split(3, 2) {
		newRole(mpccb.RoleFeature, p, "features", dataset.PartyFile(p))
		rows, err := dataset.ReadFeatures(filepath.Join(out, dataset.PartyFile(p)), cols[1]-cols[0])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rows, dataset.Columns(want.Contexts, cols[0], cols[1])) {
			t.Errorf("%s holds other values than columns %v of the table's contexts", dataset.PartyFile(p), cols)
		}
	}
	newRole(mpccb.RoleReceiver, 0, "rewards", dataset.RewardsFile)
	rewards, err := dataset.ReadRewards(filepath.Join(out, dataset.RewardsFile), 3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rewards, want.Rewards) {
		t.Errorf("%s holds other rewards than the table's labels, one-hot", dataset.RewardsFile)
	}
}

// TestDataMPCCBCSVErrors checks data mpccb --csv's refusals: flag mistakes
// are usage errors (exit 2), a table that cannot make a session an error
// naming the file (exit 1); neither writes anything.
func TestDataMPCCBCSVErrors(t *testing.T) {
	dir := t.TempDir()
	table := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	wide := table("wide.csv", "a,b,c,class\n0.1,0.1,0.1,0\n0.1,0.2,0.1,1\n")
	bad := table("bad.csv", "a,b,class\n0.1,0.1,0\n0.1,n/a,1\n")
	headless := table("headless.csv", "0.1,0.1,0\n0.1,0.2,1\n")
	missing := filepath.Join(dir, "missing.csv")
	tests := []struct {
		name string
		args []string
		exit int
		want []string
	}{
		{"no label", []string{"--csv", irisTable}, 2, []string{"--csv needs --label COLUMN"}},
		{"label without csv", []string{"--label", "species"}, 2, []string{"--label is for a --csv table only"}},
		{"pca without csv", []string{"--pca", "3"}, 2, []string{"--pca is for a --csv table only"}},
		{"dataset with csv", []string{"--csv", irisTable, "--label", "species", "--dataset", "synthetic"}, 2, []string{"--dataset is not for a --csv table"}},
		{"source with csv", []string{"--csv", irisTable, "--label", "species", "--source", dir}, 2, []string{"--source is not for a --csv table"}},
		{"pca too large for a session", []string{"--csv", irisTable, "--label", "species", "--pca", "257"}, 2, []string{"--pca 257: want 1..256"}},
		{"more parties than components", []string{"--csv", irisTable, "--label", "species", "--pca", "2", "--parties", "3"}, 2, []string{"--parties 3 for --pca 2"}},
		{"one arm", []string{"--csv", irisTable, "--label", "species", "--arms", "1"}, 2, []string{"--arms 1: a session has 2..256 arms"}},
		{"missing file", []string{"--csv", missing, "--label", "class"}, 1, []string{missing, "no such file"}},
		{"no header", []string{"--csv", headless, "--label", "class"}, 1, []string{headless, "line 1: no header"}},
		{"unknown label", []string{"--csv", irisTable, "--label", "class"}, 1, []string{irisTable, `no column "class"`, "species"}},
		{"non-numeric cell", []string{"--csv", bad, "--label", "class"}, 1, []string{bad, `line 3, column 2 (b): "n/a" is not a finite number`}},
		{"label beyond arms", []string{"--csv", irisTable, "--label", "species", "--arms", "2", "--normalize"}, 1, []string{irisTable, "label 2 is not a class in 0..1"}},
		{"too many steps", []string{"--csv", irisTable, "--label", "species", "--steps", "301", "--normalize"}, 1, []string{"--steps 301", "301 steps, but it has only 300 contexts"}},
		{"pca wider than the table", []string{"--csv", irisTable, "--label", "species", "--pca", "5"}, 1, []string{irisTable, "PCA to 5 components, but the table has 4 feature columns"}},
		{"not normalised", []string{"--csv", irisTable, "--label", "species", "--pca", "3"}, 1, []string{irisTable, "line 2", "at most 1", "pass --normalize"}},
		{"more parties than columns", []string{"--csv", wide, "--label", "class", "--parties", "4", "--normalize"}, 1, []string{wide, "4 feature parties for 3 feature columns"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "data")
			_, _, err := run(t, append([]string{"data", "mpccb", "--out", out}, tt.args...)...)
			if err == nil || ExitCode(err) != tt.exit {
				t.Fatalf("err = %v (exit %d), want exit %d", err, ExitCode(err), tt.exit)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused data mpccb wrote %s (%v)", out, err)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStageProgress checks that a preparation's stage is shown once it has
// taken longer than the delay, and never before (in a synctest bubble: the
// clock is virtual).
func TestStageProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf syncBuffer
		p := startStageProgress(&buf, "data mpccb", time.Second, time.Second)
		p.set("reading table.csv")
		time.Sleep(999 * time.Millisecond)
		synctest.Wait()
		if s := buf.String(); s != "" {
			t.Errorf("before a second, it showed %q", s)
		}
		p.set("fitting a 20-component PCA")
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		if s := buf.String(); s != "data mpccb: fitting a 20-component PCA (1s)\n" {
			t.Errorf("after a second, it showed %q, want the stage", s)
		}
		p.finish()

		buf = syncBuffer{}
		p = startStageProgress(&buf, "data mpccb", time.Second, time.Second)
		p.set("reading table.csv")
		time.Sleep(500 * time.Millisecond)
		p.finish()
		time.Sleep(time.Hour)
		if s := buf.String(); s != "" {
			t.Errorf("a quick preparation showed %q", s)
		}
	})
}

// TestSimulateCSV simulates examples/mpccb-csv.toml, from the repository's
// root as its comment says, and checks that the result has what a user
// wants of their data before deploying, with sane values.
func TestSimulateCSV(t *testing.T) {
	t.Chdir(repoRoot)
	stdout, stderr, err := run(t, "simulate", "examples/mpccb-csv.toml", "--json")
	if err != nil {
		t.Fatalf("simulate examples/mpccb-csv.toml: %v\n%s", err, stderr)
	}
	var out struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	var res struct {
		Steps                  int64    `json:"steps"`
		Arms                   int      `json:"arms"`
		Dimensions             int      `json:"dimensions"`
		AverageReward          float64  `json:"average_reward"`
		ReferenceAverageReward *float64 `json:"reference_average_reward"`
		ArmAgreement           *float64 `json:"arm_agreement"`
		MsPerStep              *float64 `json:"ms_per_step"`
	}
	if err := json.Unmarshal(out.Result, &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if res.Steps != 300 || res.Arms != 3 || res.Dimensions != 3 {
		t.Errorf("%d steps, %d arms, %d dimensions; want 300, 3, 3", res.Steps, res.Arms, res.Dimensions)
	}
	if res.ReferenceAverageReward == nil || res.ArmAgreement == nil || res.MsPerStep == nil {
		t.Fatalf("reference_average_reward, arm_agreement or ms_per_step missing:\n%s", stdout)
	}
	// Three species, one paying arm each: chance is 1/3; a linear learner
	// on Iris does far better, and the private one follows the plaintext
	// reference.
	if !(res.AverageReward > 0.5 && res.AverageReward <= 1) || !(*res.ReferenceAverageReward > 0.5 && *res.ReferenceAverageReward <= 1) {
		t.Errorf("average reward %v, reference %v; want both in (0.5, 1]", res.AverageReward, *res.ReferenceAverageReward)
	}
	if !(*res.ArmAgreement >= 0.95 && *res.ArmAgreement <= 1) {
		t.Errorf("arm agreement %v, want at least 0.95", *res.ArmAgreement)
	}
	if !(*res.MsPerStep > 0) {
		t.Errorf("ms_per_step %v, want positive", *res.MsPerStep)
	}
}

// TestSimulateCSVErrors checks the [simulation] keys of dataset "csv".
func TestSimulateCSVErrors(t *testing.T) {
	dir := t.TempDir()
	table, err := filepath.Abs(irisTable)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, params, simulation string
		want                     []string
	}{
		{"no table", "arms = 3\ndimensions = 4", `dataset = "csv"`, []string{`simulation.csv: dataset "csv" needs the table`}},
		{"no label", "arms = 3\ndimensions = 4", fmt.Sprintf("csv = %q", table), []string{"simulation.label: name the column of " + table}},
		{"csv keys for another data set", "", `dataset = "synthetic"` + "\npca = 3", []string{`simulation.pca: only for dataset = "csv", not "synthetic"`}},
		{"unknown data set", "", `dataset = "mnist"`, []string{`simulation.dataset: "mnist" is not "fashion-mnist", "synthetic" or "csv"`}},
		{"too many steps", "steps = 301\narms = 3\ndimensions = 4", fmt.Sprintf("csv = %q\nlabel = \"species\"\nnormalize = true", table), []string{"params.steps", "301 steps, but it has only 300 contexts"}},
		{"too few arms", "steps = 300\narms = 2\ndimensions = 4", fmt.Sprintf("csv = %q\nlabel = \"species\"\nnormalize = true", table), []string{"simulation.csv", "label 2 is not a class in 0..1"}},
		{"other dimensions", "steps = 300\narms = 3\ndimensions = 20", fmt.Sprintf("csv = %q\nlabel = \"species\"\npca = 3\nnormalize = true", table), []string{"params.dimensions: 20, but the contexts of " + table + " (its feature columns, or simulation.pca) have 3"}},
		{"not normalised", "steps = 300\narms = 3\ndimensions = 4", fmt.Sprintf("csv = %q\nlabel = \"species\"", table), []string{"simulation.csv", "line 2", "set simulation.normalize = true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".toml")
			text := fmt.Sprintf("protocol = \"mpccb\"\n[params]\n%s\n[simulation]\n%s\n", tt.params, tt.simulation)
			if err := os.WriteFile(spec, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := run(t, "simulate", spec)
			if err == nil {
				t.Fatalf("simulate accepted\n%s", text)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// wineTable is the example table whose columns differ in scale.
var wineTable = filepath.Join(repoRoot, "examples", "data", "wine.csv")

// TestSimulateWine: the Wine table through simulate, with no params.arms
// or params.dimensions: standardized it gets 3 arms and 13 dimensions from
// the table, an average reward within 0.05 of the plaintext reference's,
// which is at least 0.8, and no warning; scaled to unit norm only, a
// warning that the policy does no better than the best fixed arm; as it
// is, refused with the advice to standardize, naming the two columns.
func TestSimulateWine(t *testing.T) {
	table, err := filepath.Abs(wineTable)
	if err != nil {
		t.Fatal(err)
	}
	spec := func(scaling string) string {
		return writeSpec(t, t.TempDir(), "wine.toml", fmt.Sprintf("protocol = \"mpccb\"\n[params]\nsteps = 356\n[simulation]\ncsv = %q\nlabel = \"cultivar\"\n%s", table, scaling))
	}
	type result struct {
		Arms       int      `json:"arms"`
		Dimensions int      `json:"dimensions"`
		Average    float64  `json:"average_reward"`
		Reference  *float64 `json:"reference_average_reward"`
		BestFixed  *float64 `json:"best_fixed_arm_reward"`
		Warnings   []string `json:"warnings"`
	}
	simulate := func(scaling string) result {
		out, stderr, err := run(t, "simulate", spec(scaling), "--json")
		if err != nil {
			t.Fatalf("%s: %v\n%s", scaling, err, stderr)
		}
		var r struct {
			Result result `json:"result"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r.Result
	}
	r := simulate("standardize = true\n")
	switch {
	case r.Arms != 3 || r.Dimensions != 13:
		t.Errorf("%d arms, %d dimensions; want 3 and 13, from the table", r.Arms, r.Dimensions)
	case r.Reference == nil || *r.Reference < 0.8 || math.Abs(r.Average-*r.Reference) > 0.05:
		t.Errorf("average reward %v, reference %v; want the reference ≥ 0.8 and the average within 0.05 of it", r.Average, r.Reference)
	case r.BestFixed == nil || *r.BestFixed > 0.45 || len(r.Warnings) > 0:
		t.Errorf("best fixed arm %v (want the most common cultivar's share, ≈ 0.40), warnings %q (want none)", r.BestFixed, r.Warnings)
	}
	r = simulate("normalize = true\n")
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "no better than always pulling the best single arm") ||
		!strings.Contains(r.Warnings[0], "try simulation.standardize = true") {
		t.Errorf("unit norm only: average %v, warnings %q; want the warning of a policy no better than one arm", r.Average, r.Warnings)
	}
	_, _, err = run(t, "simulate", spec(""))
	for _, w := range []string{"the columns' scales differ by orders of magnitude (proline has standard deviation 314, nonflavanoid_phenols 0.124)",
		"set simulation.standardize = true"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("the table as it is: error %v, want one with %q", err, w)
		}
	}
}

// TestTableGaps: a table whose labels skip a class (0 and 2) runs, and
// says that arm 1 never pays: simulate in its result's warnings, data
// mpccb on stderr; a table of one class is refused by both alike.
func TestTableGaps(t *testing.T) {
	dir := t.TempDir()
	gaps := filepath.Join(dir, "gaps.csv")
	var rows strings.Builder
	rows.WriteString("a,b,class\n")
	for i := range 40 {
		fmt.Fprintf(&rows, "%g,%g,%d\n", 0.1+float64(i%7)/10, 0.5-float64(i%5)/10, 2*(i%2))
	}
	if err := os.WriteFile(gaps, []byte(rows.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := writeSpec(t, dir, "gaps.toml", fmt.Sprintf("protocol = \"mpccb\"\n[params]\nsteps = 40\n[simulation]\ncsv = %q\nlabel = \"class\"\nnormalize = true\n", gaps))
	out, stderr, err := run(t, "simulate", spec, "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(out, "arm 1 never pays in these 40 steps: no row of "+gaps+" has that label") {
		t.Errorf("simulate does not warn of arm 1:\n%s", out)
	}
	_, stderr, err = run(t, "data", "mpccb", "--csv", gaps, "--label", "class", "--normalize", "--out", filepath.Join(dir, "out"))
	if err != nil || !strings.Contains(stderr, "no row of "+gaps+" has label 1: that arm never pay") {
		t.Errorf("data mpccb: %v, stderr %q; want a warning of label 1", err, stderr)
	}
	one := filepath.Join(dir, "one.csv")
	if err := os.WriteFile(one, []byte("a,class\n0.5,1\n0.1,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"simulate", writeSpec(t, dir, "one.toml", fmt.Sprintf("protocol = \"mpccb\"\n[params]\nsteps = 2\n[simulation]\ncsv = %q\nlabel = \"class\"\n", one))},
		{"data", "mpccb", "--csv", one, "--label", "class", "--out", filepath.Join(dir, "one-out")},
	} {
		if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "every row's label is 1; a bandit needs at least two classes") {
			t.Errorf("%s of a one-class table: %v", args[0], err)
		}
	}
}

// TestDataMPCCBStandardize: data mpccb --standardize writes the Wine
// table's contexts z-scored and of unit norm, and says so.
func TestDataMPCCBStandardize(t *testing.T) {
	out := filepath.Join(t.TempDir(), "wine-data")
	stdout, stderr, err := run(t, "data", "mpccb", "--csv", wineTable, "--label", "cultivar", "--standardize", "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, w := range []string{"356 contexts of standardized columns, 13 feature columns, unit norm, 3 arms", "arms = 3, dimensions = 13"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
	}
	want, err := dataset.LoadCSV(wineTable, dataset.TableOptions{Label: "cultivar", Standardize: true}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dataset.ReadFeatures(filepath.Join(out, dataset.PartyFile(0)), 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 356 || math.Abs(got[5][0]-want.Contexts[5][0]) > 1e-9 {
		t.Errorf("party 0's rows: %d, row 5 %v; want 356 rows, row 5 starting %v", len(got), got[5], want.Contexts[5][:1])
	}
}
