package pfcb

import (
	"testing"

	"github.com/bandit-node/bandit-node/experiment/internal/figuretest"

	"github.com/bandit-node/bandit-node/protocol/pfcb"
)

// TestFiguresBands draws the figures from made-up summaries with one run and
// with three per point: every file parses, and the figures that have runs to
// shade have their 95% bands with three runs and none with one.
func TestFiguresBands(t *testing.T) {
	figuretest.Bands(t, drawPFCB, map[string]bool{
		"pfcb_exp1_uniform": true, "pfcb_exp1_normal": true, "pfcb_exp3_agents": true,
	})
}

func drawPFCB(dir string, runs int) ([]string, error) {
	o := Options{Out: dir, Agents: []int{2, 4}}
	eps := []float64{0.5, 1, 2}
	var rs []Session
	for _, fam := range []string{"uniform", "normal"} {
		add := func(alg string, e float64, n int, base float64) {
			for r := range runs {
				run := Session{RegretPerAgent: base + float64(r), CurveEvery: 100}
				run.Family, run.Algorithm, run.Epsilon, run.Agents, run.Run = fam, alg, e, n, r
				for k := 1; k <= 5; k++ {
					run.Curve = append(run.Curve, base*float64(k)/5+float64(r))
				}
				rs = append(rs, run)
			}
		}
		add(pfcb.AlgFCB, 0, 10, 100)
		add(pfcb.AlgNonFederated, 0, 10, 200)
		for _, e := range eps {
			add(pfcb.AlgPFCB, e, 10, 150/e)
		}
		for _, n := range o.Agents {
			add(pfcb.AlgPFCB, 1, n, 300/float64(n))
		}
	}
	frr := map[string][]float64{"uniform": {1.2, 0.9, 0.8}, "normal": {1.1, 0.8, 0.7}}
	perN := map[string][]float64{}
	for _, fam := range []string{"uniform", "normal"} {
		for _, n := range o.Agents {
			perN[fam] = append(perN[fam], 300/float64(n)+float64(runs-1)/2)
		}
	}
	return plotPFCB(o, rs, eps, frr, perN)
}
