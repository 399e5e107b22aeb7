package textfmt

import "bufio"

// Table lays out rows of cells in columns two spaces apart, each as wide
// as its widest cell: cells right-aligned (numbers), the last column
// left-aligned when LeftLast is set (names: methods, reasons).
type Table struct {
	LeftLast bool
	rows     [][]string
}

// NewTable returns a table whose first row is header.
func NewTable(header ...string) *Table { return &Table{rows: [][]string{header}} }

// Row adds a row of cells.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Flush writes the header and the rows to w, and forgets the rows.
func (t *Table) Flush(w *bufio.Writer) {
	header := t.rows[0]
	width := make([]int, len(header))
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], len(c))
		}
	}
	last := len(header) - 1
	for _, r := range t.rows {
		for i, c := range r {
			if i > 0 {
				w.WriteString("  ")
			}
			if i == last && t.LeftLast {
				w.WriteString(c)
				continue
			}
			for pad := width[i] - len(c); pad > 0; pad-- {
				w.WriteByte(' ')
			}
			w.WriteString(c)
		}
		w.WriteByte('\n')
	}
	t.rows = t.rows[:1]
}
