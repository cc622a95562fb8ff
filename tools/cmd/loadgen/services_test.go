package main

import (
	"context"
	"path/filepath"
	"testing"

	"partnerapi.dev/tools/system/systemtest"
)

// TestServicesOnATinyDataSet runs the whole services load test (setup,
// accounting load, every measured operation, the report) on 2,000 bench
// orders with a few iterations, so its requests keep matching the services.
func TestServicesOnATinyDataSet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every binary and starts the whole stack")
	}
	bin := systemtest.Binaries(t, filepath.Join("..", "..", ".."))
	args := []string{"-bin", bin, "-data", t.TempDir(), "-orders", "2000", "-requests", "3", "-warmup", "1", "-shared-buffers", "128MB"}
	if err := runServices(context.Background(), args); err != nil {
		t.Fatal(err)
	}
}

// TestFullDocumentIsAtEveryLimit checks the document the catalog import
// operations send holds exactly the limit of every kind.
func TestFullDocumentIsAtEveryLimit(t *testing.T) {
	d := fullDocument()
	options, components := 0, 0
	for _, g := range d.OptionGroups {
		options += len(g.Options)
	}
	for _, c := range d.Combos {
		components += len(c.Components)
	}
	n := importLimits
	got := []int{len(d.MenuCategories), len(d.MenuItems), len(d.OptionGroups), options, len(d.ProductCategories), len(d.Products), len(d.Combos), components}
	want := []int{n.menuCategories, n.menuItems, n.optionGroups, n.options, n.productCategories, n.products, n.combos, n.comboComponents}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("kind %d: %d, want %d", i, got[i], want[i])
		}
	}
}
