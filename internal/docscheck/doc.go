// Package docscheck holds no code: its test checks that the figures the
// documentation quotes from the committed experiment results (results/*)
// are the figures those results state, so that regenerating a results file
// without updating the docs fails the test suite instead of leaving the
// two in disagreement.
package docscheck
