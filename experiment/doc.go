// Package experiment reproduces the papers' experiments with the simulator:
// it runs grids of simulated sessions in parallel, deterministically from
// their seeds, writes every run and a summary as CSV, draws the figures and
// writes down which of the paper's claims the numbers bear out.
//
// One file per concern:
//   - bai.go and pfcb.go: the multi-agent best-arm identification and P-FCB
//     experiments, each whole (options, grid, summary, claims, files); plot.go
//     draws their figures, and bai_figures.go captions BAI's in its results
//     file (with why DP-MASE's curves jump: its epochs).
//   - plot.go also holds savePlot, through which every experiment's figure is
//     written (PNG, SVG and PDF, the legend beside the plot), and the series
//     and 95% band helpers the figures share.
//   - mpccb.go: the privacy-preserving contextual bandit's options, its grids
//     of reward and timing runs (RunMPCCB) and one simulated run, graded
//     against the plaintext reference replayed on the dealer's samples.
//   - mpccb_summary.go: its runs reduced to Figure 1's curves, Figure 2's
//     reward against η and the timing points of Figures 3 and 4.
//   - mpccb_claims.go: which of that paper's claims the numbers bear out.
//   - mpccb_ops.go: Table 1, its operations timed in plaintext and on
//     secret shares on an in-process rig of MPC engines.
//   - mpccb_output.go: its CSV files and mpccb_results.md; mpccb_plot.go
//     draws its figures.
//   - samba.go: SAMBA's Figure 8 — options, the grid (every algorithm,
//     K and budget), one run: the roles in the simulator on one thread
//     against samba.Reference, timed by the thread's CPU clock
//     (samba_cpu_*.go); samba_data.go: the embedded MovieLens means and
//     files of arm means; samba_summary.go and samba_claims.go: the
//     points and the paper's claims; samba_output.go and samba_plot.go:
//     its CSV files, samba_results.md and figures.
//   - output.go: what every experiment writes the same way: claims, CSV
//     files, Markdown table heads and cells.
//   - host.go: the machine and build a results file names (load averages,
//     VCS revision).
//   - stats.go (Summary: means with 95% intervals) and pool.go (parallel,
//     the worker pool every grid runs on).
package experiment
