// Package experiment is what the papers' experiments share. Each family's
// experiments are a package of their own below it — bai, pfcb, mpccb and
// samba — which run grids of simulated sessions in parallel,
// deterministically from their seeds, write every run and a summary as CSV,
// draw the figures and write down which of the paper's claims the numbers
// bear out. bandit-lab (cmd/bandit-lab) is their command; the daemon's
// binary imports none of them.
//
// One file per concern:
//   - output.go: what every experiment writes the same way: claims, CSV
//     files, Markdown table heads and cells.
//   - plot.go: SavePlot, through which every experiment's figure is written
//     (PNG, SVG and PDF, the legend beside the plot), and the series, 95%
//     band and axis helpers the figures share.
//   - host.go: the machine and build a results file names (load averages,
//     VCS revision).
//   - stats.go (Summary: means with 95% intervals) and pool.go (Parallel,
//     the worker pool every grid runs on).
package experiment
