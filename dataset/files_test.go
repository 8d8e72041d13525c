package dataset

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// equalRows reports whether a and b hold the same float64 bits, row by row.
func equalRows(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if math.Float64bits(a[i][j]) != math.Float64bits(b[i][j]) {
				return false
			}
		}
	}
	return true
}

func TestFilesRoundTrip(t *testing.T) {
	awkward := [][]float64{
		{0.1, 1.0 / 3, -2.0 / 3},
		{math.MaxFloat64, -math.SmallestNonzeroFloat64, 1e-300},
		{0, math.Copysign(0, -1), 1},
		{123456789.123456789, -1e21, 5e-324},
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		write func(string, [][]float64) error
		read  func(string, int) ([][]float64, error)
	}{
		{"features", WriteFeatures, ReadFeatures},
		{"rewards", WriteRewards, ReadRewards},
	} {
		for _, want := range []int{3, 0} {
			path := filepath.Join(dir, c.name+".csv")
			if err := c.write(path, awkward); err != nil {
				t.Fatal(err)
			}
			got, err := c.read(path, want)
			if err != nil {
				t.Fatal(err)
			}
			if !equalRows(got, awkward) {
				t.Errorf("%s: read back %v, wrote %v", c.name, got, awkward)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: file mode %v (%v), want 0600", c.name, fi.Mode(), err)
			}
		}
	}
	// Writing again replaces the file and leaves no temporary file behind.
	path := filepath.Join(dir, "features.csv")
	if err := WriteFeatures(path, [][]float64{{7}}); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFeatures(path, 1); err != nil || !equalRows(got, [][]float64{{7}}) {
		t.Errorf("rewritten file reads %v, %v", got, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("directory holds %d entries, want 2 (no temporary files)", len(entries))
	}
}

func TestReadFeaturesRejects(t *testing.T) {
	for _, c := range []struct {
		name, text string
		cols       int
		want       string
	}{
		{"NaN", "1,2\n3,NaN\n", 2, "line 2, column 2: \"NaN\" is not a finite number"},
		{"Inf", "# header\n+Inf,2\n", 2, "line 2, column 1: \"+Inf\" is not a finite number"},
		{"out of range", "1e400,2\n", 2, "line 1, column 1"},
		{"not a number", "1,2\n3,x\n", 2, "line 2, column 2: strconv.ParseFloat: parsing \"x\": invalid syntax"},
		{"empty field", "1,,3\n", 3, "line 1, column 2"},
		{"too few columns", "1,2,3\n4,5\n", 3, "line 2: 2 columns, want 3"},
		{"ragged, inferred", "1,2,3\n4,5\n", 0, "line 2: 2 columns, want 3"},
		{"wrong count", "1,2\n", 3, "line 1: 2 columns, want 3"},
		{"empty line", "1,2\n\n3,4\n", 2, "line 2: empty line"},
		{"too long", strings.Repeat("1,", maxLine) + "1\n", 0, "longer than 1048576 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "party0.csv", []byte(c.text))
			_, err := ReadFeatures(path, c.cols)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one naming %s and %q", err, path, c.want)
			}
		})
	}
}

func TestReadFeaturesAccepts(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       [][]float64
	}{
		{"comments anywhere, no final newline", "# a header\n1,2\n# note\n3,4", [][]float64{{1, 2}, {3, 4}}},
		{"CRLF and spaces", "1, 2\r\n 3 ,4\r\n", [][]float64{{1, 2}, {3, 4}}},
		{"only a header", "# nothing yet\n", nil},
		{"exponents", "1e-5,-2.5E+3\n", [][]float64{{1e-5, -2500}}},
	} {
		path := writeFile(t, t.TempDir(), "f.csv", []byte(c.text))
		got, err := ReadFeatures(path, 2)
		if err != nil || !equalRows(got, c.want) {
			t.Errorf("%s: got %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

func TestWriteRejects(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		rows [][]float64
		want string
	}{
		{"NaN", [][]float64{{1, math.NaN()}}, "row 0, column 2 is NaN"},
		{"Inf", [][]float64{{1, 2}, {math.Inf(-1), 0}}, "row 1, column 1 is -Inf"},
		{"ragged", [][]float64{{1, 2}, {3}}, "row 1 has 1 columns, row 0 has 2"},
		{"no columns", [][]float64{{}}, "rows have no columns"},
	} {
		path := filepath.Join(dir, c.name+".csv")
		err := WriteRewards(path, c.rows)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("%s: a file was written", c.name)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed writes left %d files", len(entries))
	}
}

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		d, p int
		want [][2]int
	}{
		{20, 1, [][2]int{{0, 20}}},
		{20, 2, [][2]int{{0, 10}, {10, 20}}},
		{20, 3, [][2]int{{0, 7}, {7, 14}, {14, 20}}},
		{20, 6, [][2]int{{0, 4}, {4, 8}, {8, 11}, {11, 14}, {14, 17}, {17, 20}}},
		{20, 20, func() [][2]int {
			var r [][2]int
			for i := range 20 {
				r = append(r, [2]int{i, i + 1})
			}
			return r
		}()},
		{3, 5, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 3}, {3, 3}}},
		{0, 2, [][2]int{{0, 0}, {0, 0}}},
		{20, 0, nil},
		{-1, 2, nil},
	} {
		if got := Split(c.d, c.p); !slices.Equal(got, c.want) {
			t.Errorf("Split(%d, %d) = %v, want %v", c.d, c.p, got, c.want)
		}
	}
}

func TestWriteSessionRejects(t *testing.T) {
	contexts := [][]float64{{1, 2, 3}, {4, 5, 6}}
	rewards := [][]float64{{0, 1}, {1, 0}}
	for _, c := range []struct {
		name              string
		parties           int
		contexts, rewards [][]float64
		want              string
	}{
		{"no contexts", 2, nil, nil, "no contexts"},
		{"more parties than features", 4, contexts, rewards, "4 feature parties for 3 features"},
		{"no parties", 0, contexts, rewards, "0 feature parties"},
		{"ragged contexts", 2, [][]float64{{1, 2, 3}, {4}}, rewards, "context 1 has 1 features"},
		{"missing rewards", 2, contexts, rewards[:1], "1 reward rows for 2 contexts"},
	} {
		err := WriteSession(t.TempDir(), c.parties, c.contexts, c.rewards)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestPrepare writes the per-organisation files from a small Fashion-MNIST
// look-alike and checks that reading them back gives exactly what Load
// gives the simulator: each party's columns of the same contexts, and the
// same reward rows.
func TestPrepare(t *testing.T) {
	dir := fakeFashionDir(t, 120, 5)
	for _, c := range []struct {
		dataset      string
		arms, limit  int
		parties      int
		wantArms     int
		wantContexts int
	}{
		{FashionMNIST, 10, 0, 2, 10, 120},
		{FashionMNIST, 0, 50, 3, 10, 50},
		{Synthetic, 7, 40, 2, 7, 40},
		{Synthetic, 2, 0, 20, 2, 120},
	} {
		out := filepath.Join(t.TempDir(), "session")
		if err := Prepare(dir, out, c.parties, c.dataset, c.arms, 11, c.limit); err != nil {
			t.Fatalf("%s: %v", c.dataset, err)
		}
		contexts, rewards, err := LoadFrom(dir, c.dataset, c.arms, 11, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(contexts) != c.wantContexts || len(rewards) != c.wantContexts {
			t.Fatalf("%s: %d contexts and %d reward rows, want %d", c.dataset, len(contexts), len(rewards), c.wantContexts)
		}
		for p, r := range Split(PCADims, c.parties) {
			got, err := ReadFeatures(filepath.Join(out, PartyFile(p)), r[1]-r[0])
			if err != nil {
				t.Fatal(err)
			}
			if !equalRows(got, Columns(contexts, r[0], r[1])) {
				t.Errorf("%s: party %d's file differs from columns %v of Load's contexts", c.dataset, p, r)
			}
		}
		if _, err := os.Stat(filepath.Join(out, PartyFile(c.parties))); err == nil {
			t.Errorf("%s: a file for party %d of %d", c.dataset, c.parties, c.parties)
		}
		got, err := ReadRewards(filepath.Join(out, RewardsFile), c.wantArms)
		if err != nil {
			t.Fatal(err)
		}
		if !equalRows(got, rewards) {
			t.Errorf("%s: rewards file differs from Load's rewards", c.dataset)
		}
		for i, row := range rewards {
			var sum float64
			for _, v := range row {
				if v != 0 && v != 1 {
					t.Fatalf("%s: reward %v", c.dataset, v)
				}
				sum += v
			}
			if c.dataset == FashionMNIST && (sum != 1 || row[i%FashionClasses] != 1) {
				t.Fatalf("%s: reward row %d = %v, want one-hot of label %d", c.dataset, i, row, i%FashionClasses)
			}
		}
	}
}

// TestBanditPrefix: a shorter synthetic run sees a prefix of a longer one's
// data (k-means clusters all contexts, whatever the limit).
func TestBanditPrefix(t *testing.T) {
	ctx, err := ProjectImages(mustImages(t, fakeFashionDir(t, 80, 1)))
	if err != nil {
		t.Fatal(err)
	}
	_, long, err := ctx.Bandit(Synthetic, 5, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	short, shortR, err := ctx.Bandit(Synthetic, 5, 3, 30)
	if err != nil {
		t.Fatal(err)
	}
	if len(short) != 30 || !equalRows(shortR, long[:30]) {
		t.Error("the first 30 rewards of a run limited to 30 differ from the full run's")
	}
	for i, x := range ctx.X {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		if len(x) != PCADims || math.Abs(ss-1) > 1e-12 {
			t.Fatalf("context %d: %d dimensions, squared norm %v", i, len(x), ss)
		}
	}
}

// mustImages reads the training images and labels of a Fashion-MNIST
// directory and returns them with PCADims, ready for ProjectImages.
func mustImages(t *testing.T, dir string) (*Images, []int, int) {
	t.Helper()
	im, labels, err := loadFashionTrain(dir)
	if err != nil {
		t.Fatal(err)
	}
	return im, labels, PCADims
}

func TestBanditRejects(t *testing.T) {
	ctx := &Contexts{X: [][]float64{{1, 0}, {0, 1}, {1, 0}}, Labels: []int{0, 1, 2}}
	for _, c := range []struct {
		dataset     string
		arms, limit int
		want        string
	}{
		{FashionMNIST, 5, 0, "has 10 arms (one per class), not 5"},
		{Synthetic, 1, 0, "1 arms, want 2..100"},
		{Synthetic, 101, 0, "101 arms, want 2..100"},
		{Synthetic, 2, 4, "data set synthetic: 4 steps, but it has only 3 contexts (one per step)"},
		{Synthetic, 2, -1, "data set synthetic: -1 steps is negative"},
		{FashionMNIST, 10, 4, "data set fashion-mnist: 4 steps, but it has only 3"},
		{"mnist", 10, 0, `unknown data set "mnist"`},
	} {
		if _, _, err := ctx.Bandit(c.dataset, c.arms, 1, c.limit); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s, %d arms, limit %d: error %v, want %q", c.dataset, c.arms, c.limit, err, c.want)
		}
	}
	if _, _, err := LoadFrom(t.TempDir(), "mnist", 10, 1, 0); err == nil || !strings.Contains(err.Error(), "unknown data set") {
		t.Errorf("LoadFrom(mnist): error %v", err)
	}
	if err := Prepare(t.TempDir(), t.TempDir(), 21, FashionMNIST, 10, 1, 0); err == nil || !strings.Contains(err.Error(), "21 feature parties") {
		t.Errorf("Prepare with 21 parties: error %v", err)
	}
}

func TestOneHotRewards(t *testing.T) {
	got, err := OneHotRewards([]int{2, 0}, 3)
	if err != nil || !equalRows(got, [][]float64{{0, 0, 1}, {1, 0, 0}}) {
		t.Errorf("OneHotRewards = %v, %v", got, err)
	}
	if _, err := OneHotRewards([]int{0, 3}, 3); err == nil || !strings.Contains(err.Error(), "label 3 (item 1)") {
		t.Errorf("label 3 of 3 arms: error %v", err)
	}
}

// TestRangeErrorNamesTheArgument checks that an argument out of range comes
// as a RangeError naming it as steps or arms, for callers to name their own
// key or flag, and that LoadFrom reports a negative step count or a
// synthetic arm count out of range before it reads any image.
func TestRangeErrorNamesTheArgument(t *testing.T) {
	ctx := &Contexts{X: [][]float64{{1, 0}, {0, 1}, {1, 0}}, Labels: []int{0, 1, 2}}
	empty := t.TempDir() // no Fashion-MNIST files: reading them would fail otherwise
	for _, c := range []struct {
		name    string
		load    func() error
		wantArg string
	}{
		{"Bandit, too many steps", func() error { _, _, err := ctx.Bandit(Synthetic, 2, 1, 4); return err }, "steps"},
		{"Bandit, too many arms", func() error { _, _, err := ctx.Bandit(Synthetic, 200, 1, 0); return err }, "arms"},
		{"LoadFrom, negative steps", func() error { _, _, err := LoadFrom(empty, Synthetic, 3, 1, -5); return err }, "steps"},
		{"LoadFrom, too many arms", func() error { _, _, err := LoadFrom(empty, Synthetic, 200, 1, 0); return err }, "arms"},
		{"Prepare, negative steps", func() error { return Prepare(empty, t.TempDir(), 2, FashionMNIST, 10, 1, -5) }, "steps"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.load()
			var re *RangeError
			if !errors.As(err, &re) || re.Arg != c.wantArg {
				t.Fatalf("err = %v, want a RangeError of %s", err, c.wantArg)
			}
			if strings.Contains(err.Error(), "limit") {
				t.Errorf("err = %v speaks of a limit, which no caller calls it", err)
			}
		})
	}
}
