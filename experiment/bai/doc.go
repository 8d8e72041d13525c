// Package bai reproduces Figures 1, 5 and 6 of Rio et al. (ICML 2023),
// multi-agent best-arm identification, with the simulator: bai.go holds
// the experiment whole (options, grid, summary, claims, files), plot.go
// draws its figures and figures.go captions them in its results file (with
// why DP-MASE's curves jump: its epochs).
package bai
