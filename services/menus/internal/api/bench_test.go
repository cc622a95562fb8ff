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
	e.unlisted = true // measure the service, not the document check
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
	version := e.must(http.StatusOK, http.MethodGet, path, helsinki, nil)["version"].(string)
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
