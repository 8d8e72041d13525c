package experiment

import (
	"strconv"
	"strings"
)

func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// mdCell escapes the pipes of a Markdown table cell.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
