// Package experiment reproduces the papers' experiments with the simulator:
// it runs grids of simulated sessions in parallel, deterministically from
// their seeds, writes every run and a summary as CSV, draws the figures and
// writes down which of the paper's claims the numbers bear out.
package experiment
