package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"partnerapi.dev/services/contracts"
)

// benchCatalog is a 2,000-item catalog on an inactive draft ("bench"),
// plus a small second menu to publish in turn.
const (
	benchMenu  = "b1000000-0000-4000-8000-000000000001"
	benchOther = "b1000000-0000-4000-8000-000000000002"
	benchItems = 2000
)

func benchItemID(i int) string { return fmt.Sprintf("a1000000-0000-4000-8000-%012d", i) }

func benchEnv(b *testing.B) *env {
	e := newEnv(b)
	e.Unchecked = true // measure the service, not the document check
	c := contracts.MenuCatalog{RestaurantID: helsinki}
	for i := range 20 {
		c.Categories = append(c.Categories, contracts.MenuCatalogCategory{ID: fmt.Sprintf("c1000000-0000-4000-8000-%012d", i), Name: fmt.Sprintf("Category %02d", i), Visible: true})
	}
	big := contracts.MenuCatalogMenu{ID: benchMenu, Name: "Bench catalog"}
	for i := range benchItems {
		c.Items = append(c.Items, contracts.MenuCatalogItem{ID: benchItemID(i), CategoryID: c.Categories[i%20].ID, Name: fmt.Sprintf("Item %04d", i),
			BasePriceMinor: int64(500 + i), Visible: true, ShowInKitchen: true, ProductType: "food", Availability: "available"})
		if i > 0 {
			big.Entries = append(big.Entries, contracts.MenuCatalogMenuEntry{ItemID: benchItemID(i)})
		}
	}
	other := contracts.MenuCatalogMenu{ID: benchOther, Name: "Small", Entries: []contracts.MenuCatalogMenuEntry{{ItemID: benchItemID(0)}}}
	c.Menus = []contracts.MenuCatalogMenu{big, other}
	e.ingest(c)
	// Other restaurants' catalogs, as in the bench data set: their menus'
	// entries interleave with the bench menu's in every index on item id.
	var others []contracts.MenuCatalog
	for r := range 30 {
		o := contracts.MenuCatalog{RestaurantID: fmt.Sprintf("d1000000-0000-4000-8000-%012d", r),
			Categories: []contracts.MenuCatalogCategory{{ID: fmt.Sprintf("d2000000-0000-4000-8000-%012d", r), Name: "Food", Visible: true}}}
		var entries []contracts.MenuCatalogMenuEntry
		for i := range 300 {
			id := fmt.Sprintf("%08x-0000-4000-8000-%012d", uint32((r*300+i+1)*2654435761), r*300+i) // spread over the id range
			o.Items = append(o.Items, contracts.MenuCatalogItem{ID: id, CategoryID: o.Categories[0].ID, Name: fmt.Sprintf("Item %d", i),
				BasePriceMinor: 100, Visible: true, ShowInKitchen: true, ProductType: "food", Availability: "available"})
			entries = append(entries, contracts.MenuCatalogMenuEntry{ItemID: id})
		}
		for m := range 3 {
			o.Menus = append(o.Menus, contracts.MenuCatalogMenu{ID: fmt.Sprintf("d3000000-0000-4000-8000-%012d", r*3+m), Name: fmt.Sprintf("Menu %d", m), Entries: entries})
		}
		others = append(others, o)
	}
	e.ingest(others...)
	return e
}

func BenchmarkListItemsPage(b *testing.B) {
	e := benchEnv(b)
	path := items(helsinki, benchMenu) + "?limit=100&after=" + benchItemID(1000)
	for b.Loop() {
		if status, _ := e.do(http.MethodGet, path, helsinki, nil); status != http.StatusOK {
			b.Fatal(status)
		}
	}
}

func BenchmarkInspectDraftItem(b *testing.B) {
	e := benchEnv(b)
	path := itemPath(helsinki, benchMenu, benchItemID(1234))
	for b.Loop() {
		if status, _ := e.do(http.MethodGet, path, helsinki, nil); status != http.StatusOK {
			b.Fatal(status)
		}
	}
}

func BenchmarkEditDraftItem(b *testing.B) {
	e := benchEnv(b)
	path := itemPath(helsinki, benchMenu, benchItemID(1234))
	version := e.inspect(benchMenu, benchItemID(1234)).Version
	n := 0
	for b.Loop() {
		n++
		status, raw := e.do(http.MethodPatch, path, helsinki, patchBody(1_000_000+n, version, map[string]any{"basePriceMinor": 600 + n%100}))
		if status != http.StatusOK {
			b.Fatalf("%d %s", status, raw)
		}
		var out struct{ Data struct{ Version string } }
		_ = json.Unmarshal(raw, &out)
		version = out.Data.Version
	}
}

func BenchmarkSetPosMenu(b *testing.B) {
	e := benchEnv(b)
	menusByTurn := []struct {
		id              string
		cats, itemCount int
	}{{benchMenu, 20, benchItems - 1}, {benchOther, 1, 1}}
	var current any
	n := 0
	for b.Loop() {
		m := menusByTurn[n%2]
		n++
		status, raw := e.do(http.MethodPut, menus(helsinki)+"/pos", helsinki, setBody(2_000_000+n, m.id, m.cats, m.itemCount, "expectedCurrentPosMenuId", current))
		if status != http.StatusOK {
			b.Fatalf("%d %s", status, raw)
		}
		current = m.id
	}
}

// fullLimitDocument holds the catalog import limits of every kind (20 menu
// categories, 100 items, 20 option groups, 100 options, 20 product
// categories, 100 products, 20 combos, 100 combo components).
func fullLimitDocument() contracts.CatalogDocument {
	ref := func(kind string, i int) string { return fmt.Sprintf("%s-%03d", kind, i) }
	d := contracts.CatalogDocument{Menu: contracts.CatalogMenu{Ref: "menu", Name: "Full menu"}}
	for i := range 20 {
		d.MenuCategories = append(d.MenuCategories, contracts.CatalogMenuCategory{Ref: ref("cat", i), Name: fmt.Sprintf("Category %d", i), Visible: true, RegulatedProductClass: "standard", DiscountPolicy: "allowed"})
		d.OptionGroups = append(d.OptionGroups, contracts.CatalogOptionGroup{Ref: ref("group", i), Name: fmt.Sprintf("Group %d", i), MaxSelections: 1})
		d.ProductCategories = append(d.ProductCategories, contracts.CatalogProductCategory{Ref: ref("pcat", i), Name: fmt.Sprintf("Product category %d", i)})
		d.Combos = append(d.Combos, contracts.CatalogCombo{Ref: ref("combo", i), Name: fmt.Sprintf("Combo %d", i), PriceMinor: 990, Visible: true})
	}
	for i := range 100 {
		g := &d.OptionGroups[i%20]
		g.Options = append(g.Options, contracts.CatalogOption{Ref: ref("opt", i), Name: fmt.Sprintf("Option %d", i), PriceMinor: int64(10 * i), Visible: true})
		it := contracts.CatalogMenuItem{Ref: ref("item", i), CategoryRef: ref("cat", i%20), Name: fmt.Sprintf("Item %d", i), BasePriceMinor: int64(100 + i), Visible: true, ProductType: "food"}
		if i < 20 {
			it.OptionGroupAssignments = []contracts.CatalogOptionGroupAssignment{{OptionGroupRef: ref("group", i)}}
		}
		d.MenuItems = append(d.MenuItems, it)
		d.Products = append(d.Products, contracts.CatalogProduct{Ref: ref("prod", i), ProductCategoryRef: ref("pcat", i%20), Name: fmt.Sprintf("Product %d", i), Unit: "pcs", TrackStock: true})
		k := &d.Combos[i%20]
		k.Components = append(k.Components, contracts.CatalogComboComponent{MenuItemRef: ref("item", i), Quantity: 1})
	}
	return d
}

// BenchmarkCatalogBatchFullLimit applies a full-limit document into a new
// draft (about 500 rows in one transaction).
func BenchmarkCatalogBatchFullLimit(b *testing.B) {
	e := benchEnv(b)
	e.Scopes = catalogScopes
	doc := fullLimitDocument()
	n := 0
	for b.Loop() {
		n++
		batch := contracts.CatalogBatch{BatchID: fmt.Sprintf("5d1e7c3a-0000-4000-8000-%012d", n),
			Target: contracts.CatalogBatchTarget{Mode: contracts.CatalogTargetNewDraft}, Document: doc}
		if status, raw := e.do(http.MethodPost, batchPath(helsinki), helsinki, batch); status != http.StatusCreated {
			b.Fatalf("%d %s", status, raw)
		}
	}
}
