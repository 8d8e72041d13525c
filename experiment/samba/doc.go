// Package samba reproduces Figure 8 of Ciucanu et al., SAMBA, with the
// simulator: samba.go holds the options, the grid (every algorithm, K and
// budget) and one run — the roles in the simulator on one thread against
// samba.Reference, timed by the thread's CPU clock (cpu_*.go); data.go the
// embedded MovieLens means and files of arm means; summary.go and
// claims.go the points and the paper's claims; output.go and plot.go its
// CSV files, samba_results.md and figures.
package samba
