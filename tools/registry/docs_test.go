package registry

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"partnerapi.dev/pkg/mdtable"
)

func readDoc(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// table is the first table under heading in doc whose first column is first.
func table(t *testing.T, doc, name, heading, first string) mdtable.Table {
	t.Helper()
	for _, tb := range mdtable.Under(doc, heading) {
		if tb.Column(first) == 0 {
			return tb
		}
	}
	t.Fatalf("%s: no table with a first column %q under %q", name, first, heading)
	return mdtable.Table{}
}

// firstNumber is the first whole number of a cell ("9081 (partnerctl …)": 9081).
func firstNumber(cell string) int {
	f := strings.FieldsFunc(cell, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

// TestREADMEPortTable holds the README's process and port table to the
// registry: one row per process, with its two ports.
func TestREADMEPortTable(t *testing.T) {
	tb := table(t, readDoc(t, "README.md"), "README.md", "`make run`", "process")
	rows := map[string][]string{}
	for _, row := range tb.Rows {
		rows[row[0]] = row
	}
	for _, p := range Processes() {
		row, ok := rows[p.Name]
		if !ok {
			t.Errorf("README.md: the port table has no row for %s", p.Name)
			continue
		}
		delete(rows, p.Name)
		if len(row) < 3 || firstNumber(row[1]) != p.Port || firstNumber(row[2]) != p.InternalPort {
			t.Errorf("README.md: the port table says %s listens on %v, the registry says %d and %d", p.Name, row[1:], p.Port, p.InternalPort)
		}
	}
	for name := range rows {
		t.Errorf("README.md: the port table lists %s, which is not a registered process", name)
	}
}

// TestConventionsModuleTable holds docs/conventions.md's module table to the
// registry: every module once, by folder, with the binaries built from it.
func TestConventionsModuleTable(t *testing.T) {
	tb := table(t, readDoc(t, "docs/conventions.md"), "docs/conventions.md", "Modules", "module")
	folder, binary := tb.Column("folder"), tb.Column("binary")
	if folder < 0 || binary < 0 {
		t.Fatalf("docs/conventions.md: the module table needs the columns folder and binary, has %v", tb.Header)
	}
	r := System()
	want := map[string][]string{}
	for _, m := range r.Modules() {
		want[m] = []string{}
	}
	for _, p := range r.Processes {
		want[p.Module] = append(want[p.Module], p.Name)
	}
	for _, c := range r.ExtraCommands {
		for m := range want {
			if strings.HasPrefix(c, m+"/") {
				want[m] = append(want[m], path.Base(c))
			}
		}
	}
	seen := map[string]bool{}
	for _, row := range tb.Rows {
		dirs := mdtable.Code(row[folder])
		if len(dirs) != 1 {
			t.Errorf("docs/conventions.md: module row %v: want one folder", row)
			continue
		}
		dir := strings.TrimSuffix(dirs[0], "/")
		bins, ok := want[dir]
		if !ok {
			t.Errorf("docs/conventions.md lists module %s, which the registry does not have", dir)
			continue
		}
		seen[dir] = true
		got := mdtable.Code(row[binary])
		slices.Sort(got)
		slices.Sort(bins)
		if !slices.Equal(got, bins) {
			t.Errorf("docs/conventions.md: module %s builds %v, the registry says %v", dir, got, bins)
		}
	}
	for m := range want {
		if !seen[m] {
			t.Errorf("docs/conventions.md: the module table lacks %s", m)
		}
	}
}
