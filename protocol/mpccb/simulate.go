package mpccb

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/protocol"
)

// simulation is the mpccb part of a spec's [simulation] table.
type simulation struct {
	// Parties is the number of feature parties (default 2).
	Parties int `toml:"parties"`
	// Dataset is "fashion-mnist" (10 arms), "synthetic" (params.arms
	// k-means clusters) or "csv" (an organisation's own table; the default
	// when csv is given).
	Dataset string `toml:"dataset"`
	// DataSeed fixes the synthetic data set's clustering and reward draws
	// (default 1).
	DataSeed uint64 `toml:"data_seed"`
	// CSV names the table of dataset "csv" (a path relative to the working
	// directory) and Label its label column, each row's class: the arm
	// that pays 1. PCA (0: none) and Normalize are data mpccb's --pca and
	// --normalize (dataset.TableOptions).
	CSV       string `toml:"csv"`
	Label     string `toml:"label"`
	PCA       int    `toml:"pca"`
	Normalize bool   `toml:"normalize"`
	// Standardize is data mpccb's --standardize: every feature column
	// z-scored, then every context scaled to unit norm, for a table whose
	// columns have different scales (dataset.TableOptions).
	Standardize bool `toml:"standardize"`
}

func parseSimulation(raw map[string]any) (simulation, error) {
	s := simulation{Parties: 2, Dataset: dataset.FashionMNIST, DataSeed: 1}
	if err := protocol.DecodeTable("simulation", raw, &s); err != nil {
		return s, err
	}
	if _, named := raw["dataset"]; !named && s.CSV != "" {
		s.Dataset = dataset.CSV
	}
	if s.Parties < 2 || s.Parties > MaxParties {
		return s, fmt.Errorf("simulation.parties: %d is out of range [2, %d]", s.Parties, MaxParties)
	}
	switch s.Dataset {
	case dataset.FashionMNIST, dataset.Synthetic:
		for _, k := range []struct {
			key string
			set bool
		}{{"csv", s.CSV != ""}, {"label", s.Label != ""}, {"pca", s.PCA != 0}, {"normalize", s.Normalize}, {"standardize", s.Standardize}} {
			if k.set {
				return s, fmt.Errorf("simulation.%s: only for dataset = %q, not %q", k.key, dataset.CSV, s.Dataset)
			}
		}
	case dataset.CSV:
		switch {
		case s.CSV == "":
			return s, fmt.Errorf("simulation.csv: dataset %q needs the table: csv = FILE (a CSV file with a header)", dataset.CSV)
		case s.Label == "":
			return s, fmt.Errorf("simulation.label: name the column of %s holding each row's class (the arm that pays 1)", s.CSV)
		case s.PCA < 0 || s.PCA > MaxDimensions:
			return s, fmt.Errorf("simulation.pca: %d is out of range [0, %d] (0: keep the table's columns)", s.PCA, MaxDimensions)
		}
	default:
		return s, fmt.Errorf("simulation.dataset: %q is not %q, %q or %q", s.Dataset, dataset.FashionMNIST, dataset.Synthetic, dataset.CSV)
	}
	return s, nil
}

// dataKey names one loaded data set.
type dataKey struct {
	dataset string
	arms    int
	seed    uint64
	limit   int
	// A table's path and options.
	csv, label             string
	pca                    int
	normalize, standardize bool
}

// dataCache keeps the data sets a Family has loaded.
type dataCache struct {
	mu   sync.Mutex
	sets map[dataKey][2][][]float64
}

func newDataCache() *dataCache { return &dataCache{sets: map[dataKey][2][][]float64{}} }

// load returns the contexts and reward rows of a data set, from the cache
// when it has them.
func (f family) load(s simulation, p Params) (contexts, rewards [][]float64, err error) {
	k := dataKey{s.Dataset, p.Arms, s.DataSeed, int(p.Steps), s.CSV, s.Label, s.PCA, s.Normalize, s.Standardize}
	if f.cache != nil {
		f.cache.mu.Lock()
		defer f.cache.mu.Unlock()
		if v, ok := f.cache.sets[k]; ok {
			return v[0], v[1], nil
		}
	}
	if s.Dataset == dataset.FashionMNIST && p.Arms != 10 {
		return nil, nil, fmt.Errorf("params.arms: Fashion-MNIST has 10 classes, so 10 arms, not %d", p.Arms)
	}
	source := fmt.Sprintf("the %s contexts", s.Dataset)
	if s.Dataset == dataset.CSV {
		source = fmt.Sprintf("the contexts of %s (its feature columns, or simulation.pca)", s.CSV)
		contexts, rewards, err = loadTable(s, p)
	} else {
		contexts, rewards, err = dataset.Load(s.Dataset, p.Arms, s.DataSeed, int(p.Steps))
	}
	if err != nil {
		var re *dataset.RangeError
		if errors.As(err, &re) {
			return nil, nil, fmt.Errorf("params.%s: %w", re.Arg, err) // steps or arms
		}
		return nil, nil, err
	}
	if len(contexts) < int(p.Steps) {
		return nil, nil, fmt.Errorf("params.steps: %d steps, but the %s data set has %d contexts", p.Steps, s.Dataset, len(contexts))
	}
	if len(contexts[0]) != p.Dimensions {
		return nil, nil, fmt.Errorf("params.dimensions: %d, but %s have %d", p.Dimensions, source, len(contexts[0]))
	}
	if f.cache != nil {
		f.cache.sets[k] = [2][][]float64{contexts, rewards}
	}
	return contexts, rewards, nil
}

// loadTable reads the table of dataset "csv": params.steps contexts, each
// label a class in 0..params.arms−1.
func loadTable(s simulation, p Params) (contexts, rewards [][]float64, err error) {
	b, err := dataset.LoadCSV(s.CSV, dataset.TableOptions{Label: s.Label, Arms: p.Arms, PCA: s.PCA, Normalize: s.Normalize,
		Standardize: s.Standardize}, int(p.Steps))
	if err != nil {
		var ne *dataset.NormError
		var re *dataset.RangeError
		switch {
		case errors.As(err, &ne) && ne.Scales != "":
			return nil, nil, fmt.Errorf("simulation.csv: %w: set simulation.standardize = true (or simulation.normalize = true to scale every context to unit norm as it is)", err)
		case errors.As(err, &ne):
			return nil, nil, fmt.Errorf("simulation.csv: %w: set simulation.normalize = true to scale every context to unit norm", err)
		case errors.As(err, &re):
			return nil, nil, err // load names params.steps or params.arms
		}
		return nil, nil, fmt.Errorf("simulation.csv: %w", err)
	}
	return b.Contexts, b.Rewards, nil
}

// PrepareSimulation is protocol.Simulator's PrepareSimulation: the parties' data come
// from the data set, each feature party receiving its own columns
// (dataset.Split) and p″ the reward rows.
func (f family) PrepareSimulation(raw map[string]any, roles protocol.Assignment, p Params) (protocol.Prepared, error) {
	s, err := parseSimulation(raw)
	if err != nil {
		return protocol.Prepared{}, err
	}
	a := roles
	if len(a.Roles) == 0 {
		fp := make([]string, s.Parties)
		for i := range fp {
			fp[i] = fmt.Sprintf("fp%d", i+1)
		}
		a = protocol.Assignment{Roles: map[string][]string{RoleFeature: fp, RolePuller: {"puller"},
			RoleReceiver: {"receiver"}, RoleDealer: {"dealer"}}}
	}
	P := a.Count(RoleFeature)
	var completed bool
	if s.Dataset == dataset.CSV && (!p.armsGiven || !p.dimensionsGiven) {
		if p, err = f.fromTable(s, p); err != nil {
			return protocol.Prepared{}, err
		}
		completed = true
	}
	contexts, rewards, err := f.load(s, p)
	if err != nil {
		return protocol.Prepared{}, err
	}
	locals := map[protocol.Party]any{}
	for i, c := range dataset.Split(p.Dimensions, P) {
		locals[protocol.Party{Role: RoleFeature, Index: i}] = &FeatureLocal{Rows: dataset.Columns(contexts[:p.Steps], c[0], c[1])}
	}
	locals[protocol.Party{Role: RoleReceiver}] = &RewardLocal{Rows: rewards[:p.Steps]}
	prep := protocol.Prepared{Assignment: a, Local: locals}
	if completed {
		prep.Params = p
	}
	return prep, nil
}

// fromTable completes p from the table of a simulation of dataset "csv"
// whose spec leaves params.arms or params.dimensions out, as data mpccb
// does: the arms are the table's classes (its largest label + 1; a table
// of one class is refused), the dimensions its contexts' (its feature
// columns, or simulation.pca).
func (f family) fromTable(s simulation, p Params) (Params, error) {
	if !p.armsGiven {
		p.Arms = 0 // the table's classes
	}
	b, err := dataset.LoadCSV(s.CSV, dataset.TableOptions{Label: s.Label, Arms: p.Arms, PCA: s.PCA, Normalize: s.Normalize,
		Standardize: s.Standardize}, 0)
	if err != nil {
		// load, with the completed params, words the errors.
		if _, _, lerr := loadTable(s, p); lerr != nil {
			return p, lerr
		}
		return p, fmt.Errorf("simulation.csv: %w", err)
	}
	p.Arms = b.Arms
	if !p.dimensionsGiven {
		p.Dimensions = len(b.Contexts[0])
	}
	if err := p.validate(); err != nil {
		return p, fmt.Errorf("%w (taken from the table %s: give params.arms and params.dimensions to choose them)", err, s.CSV)
	}
	return p, nil
}

// NewSchedule is protocol.Simulator's NewSchedule: an mpccb simulation advances
// on messages, in ticks.
func (family) NewSchedule(map[string]any, Params, protocol.Assignment, io.Reader) (protocol.Schedule, error) {
	return nil, nil
}

// Grade is protocol.Simulator's Grade: it runs the plaintext reference on
// the same contexts with the dealer's samples (the dealer's seeded
// randomness replayed), compares it with p′'s arms, and sets the time per
// step from the roles' busy time — only the time when a party's own environment
// answered (protocol.Grading.OwnEnvironments).
func (f family) Grade(g protocol.Grading, p Params, res *Result) (any, error) {
	raw, seed, local := g.Raw, g.Seed, g.Local
	res.setTiming(g.RoleSeconds)
	if len(g.OwnEnvironments) > 0 {
		// A feature party's contexts or the receiver's rewards came from
		// its own program, service or file, which the reference cannot
		// replay.
		return res, nil
	}
	s, err := parseSimulation(raw)
	if err != nil {
		return nil, err
	}
	contexts, rewards, err := f.load(s, p)
	if err != nil {
		return nil, err
	}
	_, sampler, err := dealerSeeds(protocol.SeededRand(seed, protocol.Party{Role: RoleDealer}), res.Parties)
	if err != nil {
		return nil, err
	}
	pl, ok := local[protocol.Party{Role: RolePuller}.String()].(PullerLocal)
	if !ok || len(pl.Arms) != int(p.Steps) {
		return nil, fmt.Errorf("p′ kept no arm for every step")
	}
	// ref runs on its own; follow takes the private learner's arms after
	// each choice (each batch's choices), so it is always in the private
	// learner's state. In a batched session both are the batched
	// algorithm (Reference.StepBatch), in batches of the session's B.
	ref, follow := NewReference(p, sampler), NewReference(p, sampler)
	var agree, decided int
	var total float64
	for u := uint64(1); u <= p.units(); u++ {
		first, n := p.unitSteps(u)
		lo, hi := int(first)-1, int(first)-1+n
		arms, got := ref.StepBatch(contexts[lo:hi], rewards[lo:hi])
		for j, a := range arms {
			total += got[j]
			if a == int(pl.Arms[lo+j]) {
				agree++
			}
		}
		for t := lo; t < hi; t++ {
			if follow.Choose(contexts[t]) == int(pl.Arms[t]) {
				decided++
			}
		}
		for t := lo; t < hi; t++ {
			private := int(pl.Arms[t])
			follow.Update(contexts[t], private, rewards[t][private])
		}
	}
	avg := total / float64(p.Steps)
	ag := float64(agree) / float64(p.Steps)
	dg := float64(decided) / float64(p.Steps)
	res.ReferenceAverageReward = &avg
	res.ArmAgreement = &ag
	res.DecisionAgreement = &dg
	res.grade(rewards[:p.Steps], s)
	return res, nil
}

// bestFixedMargin is how far above the best fixed arm's average reward a
// learned policy must earn not to be warned of: within it, the contexts
// taught it nothing an arm pulled blindly would not earn.
const bestFixedMargin = 0.01

// grade sets what the simulated rewards say of the result: the average
// reward of the best arm pulled at every step (for a table's one-hot
// rewards: the majority class's share), and warnings of arms that never
// pay and of a policy that does no better than that arm.
func (r *Result) grade(rewards [][]float64, s simulation) {
	sums := make([]float64, r.Arms)
	for _, row := range rewards {
		for a, v := range row {
			sums[a] += v
		}
	}
	best := slices.Max(sums) / float64(len(rewards))
	r.BestFixedArmReward = &best
	var never []string
	for a, v := range sums {
		if v == 0 {
			never = append(never, strconv.Itoa(a))
		}
	}
	if len(never) > 0 {
		why := ""
		if s.Dataset == dataset.CSV {
			why = fmt.Sprintf(": no row of %s has that label among the steps (a gap in the labels, or params.arms above the classes)", s.CSV)
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("arm %s never pays in these %d steps%s", strings.Join(never, ", "), len(rewards), why))
	}
	if r.AverageReward <= best+bestFixedMargin {
		hint := ""
		if s.Dataset == dataset.CSV && !s.Standardize {
			hint = "; if the table's columns have different scales, try simulation.standardize = true"
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("the learned policy earns %.4f a step, no better than always pulling the best single arm (%.4f)%s",
			r.AverageReward, best, hint))
	}
}

// setTiming sets the time per step from the roles' busy time (Grade).
func (r *Result) setTiming(roleSeconds map[string]float64) {
	var sum float64
	for _, s := range roleSeconds {
		sum += s
	}
	ms := 1000 * sum / float64(r.Steps)
	r.MsPerStep = &ms
}

// Result is a session's result as the initiator sees it.
type Result struct {
	Parties       int     `json:"parties"`
	Arms          int     `json:"arms"`
	Dimensions    int     `json:"dimensions"`
	Steps         int64   `json:"steps"`
	Epsilon       float64 `json:"epsilon"`
	PrecisionBits int     `json:"precision_bits"`
	// DPEta is Theorem 1's η = log(|A|/ε): opening a_t to p′ is η-DP.
	DPEta           float64   `json:"dp_eta"`
	AverageReward   float64   `json:"average_reward"`
	RewardCurve     []float64 `json:"reward_curve,omitempty"`
	CheckpointEvery int64     `json:"checkpoint_every,omitempty"`
	// Batch is B, the steps one round of the protocol served (batch.go);
	// 1 is the paper's algorithm.
	Batch int `json:"batch"`
	// RoundsPerStep counts the exchanges among the feature parties; in a
	// batched session a batch's are shared by its B steps.
	RoundsPerStep float64 `json:"rounds_per_step"`
	// BytesPerStep is what all feature parties sent each other per step
	// (payload bytes, 8 per ring element); DealerBytesPerStep what the
	// dealer sent party 0.
	BytesPerStep       float64 `json:"bytes_per_step"`
	DealerBytesPerStep float64 `json:"dealer_bytes_per_step"`
	// In a simulation: the plaintext reference on the same samples, the
	// fraction of steps where both chose the same arm, and the wall time
	// per step of all roles together.
	ReferenceAverageReward *float64 `json:"reference_average_reward,omitempty"`
	ArmAgreement           *float64 `json:"arm_agreement,omitempty"`
	// DecisionAgreement is the fraction of steps where the plaintext
	// learner, kept in the private learner's state (it is updated with the
	// private learner's arm every step), would choose the same arm: one
	// flipped near-tie changes the two learners' later states, so
	// ArmAgreement counts its consequences, DecisionAgreement only the flips.
	DecisionAgreement *float64 `json:"decision_agreement,omitempty"`
	// BestFixedArmReward is, in a simulation, the average reward of the
	// best single arm pulled at every step: the majority class's share of
	// a table. A policy that learns from the contexts earns more.
	BestFixedArmReward *float64 `json:"best_fixed_arm_reward,omitempty"`
	// Warnings say, in a simulation, what makes the result doubtful: arms
	// that never pay, a policy no better than the best fixed arm.
	Warnings  []string `json:"warnings,omitempty"`
	MsPerStep *float64 `json:"ms_per_step,omitempty"`
	// SessionMsPerStep is the time per step by the feature parties' clocks,
	// from the first step to the last: on the network, the wall time the
	// session took; in a simulation, virtual time (link latency only).
	SessionMsPerStep float64 `json:"session_ms_per_step"`
	// Learns says what each role learned, and what organisations playing
	// several roles learned by combining them.
	Learns []string `json:"learns"`
}

// Combine is protocol.Family's Combine.
func (family) Combine(a protocol.Assignment, p Params, reports map[protocol.Party][]byte) (*Result, error) {
	P := a.Count(RoleFeature)
	res := &Result{Parties: P, Arms: p.Arms, Dimensions: p.Dimensions, Steps: p.Steps, Epsilon: p.Epsilon,
		PrecisionBits: p.PrecisionBits, DPEta: p.PrivacyEta(), Batch: p.batch()}
	var rounds, words, elapsed int64
	for i := range P {
		rep, err := partyReport(reports, protocol.Party{Role: RoleFeature, Index: i}, p)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			rounds = rep.Rounds
		} else if rep.Rounds != rounds {
			return nil, fmt.Errorf("feature parties 0 and %d report %d and %d rounds", i, rounds, rep.Rounds)
		}
		if rep.Words < 0 {
			return nil, fmt.Errorf("feature party %d reports %d words", i, rep.Words)
		}
		words += rep.Words * int64(P-1)
		elapsed = max(elapsed, rep.ElapsedNs)
	}
	recv, err := partyReport(reports, protocol.Party{Role: RoleReceiver}, p)
	if err != nil {
		return nil, err
	}
	if math.IsNaN(recv.RewardTotal) || math.IsInf(recv.RewardTotal, 0) {
		return nil, fmt.Errorf("p″ reports a total reward of %v", recv.RewardTotal)
	}
	dl, err := partyReport(reports, protocol.Party{Role: RoleDealer}, p)
	if err != nil {
		return nil, err
	}
	if _, err := partyReport(reports, protocol.Party{Role: RolePuller}, p); err != nil {
		return nil, err
	}
	n := float64(p.Steps)
	res.AverageReward = recv.RewardTotal / n
	res.RewardCurve, res.CheckpointEvery = recv.RewardCurve, recv.CheckpointEvery
	res.RoundsPerStep = float64(rounds) / n
	res.BytesPerStep = 8 * float64(words) / n
	res.DealerBytesPerStep = 8 * float64(dl.CorrectionWords) / n
	res.SessionMsPerStep = float64(elapsed) / 1e6 / n
	res.Learns = append([]string{
		"feature parties: their own features, uniform shares and masked openings",
		"dealer: its seeds and samples, no data",
		fmt.Sprintf("arm puller: every a_t, log(|A|/ε) = %.3g-DP per step (Theorem 1)", res.DPEta),
		"reward receiver: every r_t (with its reward table, the arms that pay r_t)",
	}, sharedOrgs(a)...)
	return res, nil
}

// partyReport decodes and checks one party's report.
func partyReport(reports map[protocol.Party][]byte, q protocol.Party, p Params) (report, error) {
	b, ok := reports[q]
	if !ok {
		return report{}, fmt.Errorf("no report from %s", q)
	}
	rep, err := decodeReport(b)
	if err != nil {
		return report{}, fmt.Errorf("%s: %w", q, err)
	}
	if rep.Steps != p.Steps {
		return report{}, fmt.Errorf("%s reports %d steps, the session had %d", q, rep.Steps, p.Steps)
	}
	return rep, nil
}
