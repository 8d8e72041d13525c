// Package pfcb reproduces EXP1–3 of Solanki et al. (ECML PKDD 2022), P-FCB,
// with the simulator: pfcb.go holds the experiment whole (options, grid,
// summary, claims, files) and plot.go draws its figures. sensitivity*.go
// is the study of EXP1's gaps to the paper over the choices the paper
// leaves open: its settings, runs and results file.
package pfcb
