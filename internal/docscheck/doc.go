// Package docscheck holds no code: its tests check that the figures the
// documentation quotes from the committed experiment results (results/*)
// are the figures those results state — copied from a line
// (TestDocsQuoteTheResults) or worked out from a table or a CSV file
// (TestDocsDeriveFromTheResults) — so that regenerating a results file
// without updating the docs fails the test suite instead of leaving the
// two in disagreement. TestDocsDropStaleStatements keeps statements found
// wrong out of the docs.
package docscheck
