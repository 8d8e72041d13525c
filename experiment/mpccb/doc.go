// Package mpccb reproduces section 5 of Hannun et al., privacy-preserving
// contextual bandits (Figures 1–4 and Table 1), with the simulator:
//   - mpccb.go: the options, the grids of reward and timing runs (Run) and
//     one simulated run, graded against the plaintext reference replayed on
//     the dealer's samples.
//   - summary.go: the runs reduced to Figure 1's curves, Figure 2's reward
//     against η and the timing points of Figures 3 and 4.
//   - claims.go: which of the paper's claims the numbers bear out.
//   - ops.go: Table 1, its operations timed in plaintext and on secret
//     shares on an in-process rig of MPC engines.
//   - output.go: the CSV files and mpccb_results.md; plot.go draws the
//     figures.
package mpccb
