package samba

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// Tuning is the algorithms' parameters an experiment runs with on a
// dataset: ε of ε-greedy, ε-decreasing's schedule f_ε(t), softmax's
// temperature τ and pursuit's learning rate β. Each dataset has its own
// (the SAMBA prototype tuned MovieLens and Jester apart); the zero value of
// a field means "not given".
type Tuning struct {
	Epsilon         float64 `toml:"epsilon"`
	EpsilonSchedule string  `toml:"epsilon_schedule"`
	Tau             float64 `toml:"tau"`
	Beta            float64 `toml:"beta"`
}

// movieLensTuning is the prototype's params_MovieLens.csv: ε = 0.1,
// τ = 0.06, β = 0.1, and for ε-decreasing f_ε(t) = 1/log₂ t (the paper's
// text names no schedule; the prototype's is the one its figures come
// from). (Its params_Jester.csv has τ = 0.02, β = 0.2.)
var movieLensTuning = Tuning{Epsilon: 0.1, EpsilonSchedule: "log2", Tau: 0.06, Beta: 0.1}

// movieLensSource is where movieLensTuning comes from, for the results.
const movieLensSource = "the prototype's MovieLens parameters (params_MovieLens.csv)"

// tuned is a Tuning and where each of its values came from.
type tuned struct {
	Tuning
	// From names the source of each field ("epsilon", "epsilon_schedule",
	// "tau", "beta").
	From map[string]string
}

// over returns t with the fields o gives replaced, their source from.
func (t tuned) over(o Tuning, from string) tuned {
	out := tuned{Tuning: t.Tuning, From: map[string]string{}}
	for k, v := range t.From {
		out.From[k] = v
	}
	set := func(key string, given bool, apply func()) {
		if given {
			apply()
			out.From[key] = from
		}
	}
	set("epsilon", o.Epsilon != 0, func() { out.Epsilon = o.Epsilon })
	set("epsilon_schedule", o.EpsilonSchedule != "", func() { out.EpsilonSchedule = o.EpsilonSchedule })
	set("tau", o.Tau != 0, func() { out.Tau = o.Tau })
	set("beta", o.Beta != 0, func() { out.Beta = o.Beta })
	return out
}

// builtinTuning is the parameters of the embedded MovieLens means, and the
// default of a means file that no description accompanies.
func builtinTuning() tuned {
	return tuned{}.over(movieLensTuning, movieLensSource)
}

// descriptionPath is the dataset description beside a means file: the
// same name with the extension .toml (jester.txt → jester.toml).
func descriptionPath(means string) string {
	return strings.TrimSuffix(means, filepath.Ext(means)) + ".toml"
}

// readDescription reads the description beside the means file path, if
// there is one: the dataset's Tuning (keys epsilon, epsilon_schedule, tau,
// beta; an unknown key is an error naming it).
func readDescription(means string) (Tuning, string, error) {
	path := descriptionPath(means)
	if path == means {
		return Tuning{}, "", nil
	}
	text, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Tuning{}, "", nil
	}
	if err != nil {
		return Tuning{}, "", fmt.Errorf("the dataset's description: %w", err)
	}
	var t Tuning
	md, err := toml.Decode(string(text), &t)
	if err != nil {
		return Tuning{}, "", fmt.Errorf("the dataset's description %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return Tuning{}, "", fmt.Errorf("the dataset's description %s: unknown key %s (it takes epsilon, epsilon_schedule, tau, beta)", path, und[0])
	}
	return t, path, nil
}

// describe writes the parameters and their sources in words, for the
// results file: "ε = 0.1, ε-decreasing 1/log₂ t, τ = 0.02, β = 0.2 (τ and β:
// the command line; ε and the schedule: the prototype's MovieLens
// parameters (params_MovieLens.csv))".
func (t tuned) describe() string {
	schedule := "1/ln t"
	if t.EpsilonSchedule == "log2" {
		schedule = "1/log₂ t"
	}
	values := fmt.Sprintf("ε = %g, ε-decreasing %s, τ = %g, β = %g", t.Epsilon, schedule, t.Tau, t.Beta)
	names := map[string]string{"epsilon": "ε", "epsilon_schedule": "the schedule", "tau": "τ", "beta": "β"}
	var order []string // the sources, in the order of the fields
	by := map[string][]string{}
	for _, key := range []string{"epsilon", "epsilon_schedule", "tau", "beta"} {
		src := t.From[key]
		if _, seen := by[src]; !seen {
			order = append(order, src)
		}
		by[src] = append(by[src], names[key])
	}
	if len(order) == 1 {
		return values + " (" + order[0] + ")"
	}
	parts := make([]string, len(order))
	for i, src := range order {
		parts[i] = andList(by[src]) + ": " + src
	}
	return values + " (" + strings.Join(parts, "; ") + ")"
}

// andList writes xs as "a, b and c".
func andList(xs []string) string {
	if len(xs) == 1 {
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
