// Package mdtable reads the tables of a Markdown document, so that a test can
// hold a document's tables to the code they describe.
package mdtable

import (
	"regexp"
	"strings"
)

// Table is one pipe table: its header cells and its rows, cells trimmed.
type Table struct {
	Header []string
	Rows   [][]string
}

// Column is the index of the header cell named name, or -1.
func (t Table) Column(name string) int {
	for i, h := range t.Header {
		if h == name {
			return i
		}
	}
	return -1
}

// Under returns the tables of the section whose heading text is heading (any
// level), up to the next heading of the same or a higher level. Tables in code
// blocks do not count.
func Under(doc, heading string) []Table {
	var (
		out      []Table
		level    int // of the section being read; 0 before it
		cur      *Table
		inCode   bool
		sawDelim bool
	)
	flush := func() {
		if cur != nil && sawDelim {
			out = append(out, *cur)
		}
		cur, sawDelim = nil, false
	}
	for _, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			inCode = !inCode
			flush()
			continue
		}
		if inCode {
			continue
		}
		if n := headingLevel(trimmed); n > 0 {
			flush()
			text := strings.TrimSpace(trimmed[n:])
			switch {
			case level == 0 && text == heading:
				level = n
			case level > 0 && n <= level:
				return out
			}
			continue
		}
		if level == 0 {
			continue
		}
		if !strings.HasPrefix(trimmed, "|") {
			flush()
			continue
		}
		cells := Cells(trimmed)
		switch {
		case cur == nil:
			cur = &Table{Header: cells}
		case !sawDelim:
			sawDelim = true
		default:
			cur.Rows = append(cur.Rows, cells)
		}
	}
	flush()
	return out
}

func headingLevel(line string) int {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n == len(line) || line[n] != ' ' {
		return 0
	}
	return n
}

// Cells splits one table row into its trimmed cells; a pipe inside a code
// span or escaped as \| does not split.
func Cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	row = strings.TrimSuffix(row, "|")
	var (
		cells  []string
		b      strings.Builder
		inCode bool
	)
	for i := 0; i < len(row); i++ {
		switch c := row[i]; {
		case c == '\\' && i+1 < len(row) && row[i+1] == '|':
			b.WriteByte('|')
			i++
		case c == '`':
			inCode = !inCode
			b.WriteByte(c)
		case c == '|' && !inCode:
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// Code returns the code spans of a cell, in order, without their backticks.
func Code(cell string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}
