package bai

import (
	"testing"

	"github.com/bandit-node/bandit-node/experiment"
	"github.com/bandit-node/bandit-node/experiment/internal/figuretest"
)

// TestFiguresBands draws the figures from made-up summaries with one run and
// with three per point: every file parses, and the figures that have runs to
// shade have their 95% bands with three runs and none with one.
func TestFiguresBands(t *testing.T) {
	figuretest.Bands(t, drawBAI, map[string]bool{
		"bai_problem2_fig1_dp_mase": true, "bai_problem2_fig1_corrupted": true, "bai_problem2_fig5_beta": true,
		"bai_problem2_fig6_dp_mase": true, "bai_problem2_fig6_corrupted": true,
	})
}

func drawBAI(dir string, runs int) ([]string, error) {
	o := Options{Out: dir, Runs: runs, Agents: []int{64, 128, 256}, Problem: 2}
	grid := baiGrid()
	sum := map[string]map[int]baiPoint{}
	for i, s := range grid {
		sum[s.Name] = map[int]baiPoint{}
		for j, n := range o.Agents {
			m := float64(1000 * (i + 1) * (j + 1))
			half := 0.0
			if runs > 1 {
				half = m / 5
			}
			sum[s.Name][n] = baiPoint{Summary: experiment.Summary{N: runs, Mean: m, Low: m - half, High: m + half}}
		}
	}
	return plotBAI(o, grid, sum)
}
