package domain

import (
	"fmt"
	"strings"
	"testing"

	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/services/contracts"
)

func ptr[T any](v T) *T { return &v }

func TestItemChangesCheck(t *testing.T) {
	for name, c := range map[string]struct {
		changes ItemChanges
		valid   bool
	}{
		"nothing":                {ItemChanges{}, false},
		"a name":                 {ItemChanges{Name: ptr("Soup")}, true},
		"an empty name":          {ItemChanges{Name: ptr("")}, false},
		"200 characters":         {ItemChanges{Name: ptr(strings.Repeat("é", 200))}, true},
		"201 characters":         {ItemChanges{Name: ptr(strings.Repeat("é", 201))}, false},
		"price 0":                {ItemChanges{BasePriceMinor: ptr(int64(0))}, true},
		"price at the bound":     {ItemChanges{BasePriceMinor: ptr(int64(1_000_000_000))}, true},
		"price over the bound":   {ItemChanges{BasePriceMinor: ptr(int64(1_000_000_001))}, false},
		"negative price":         {ItemChanges{BasePriceMinor: ptr(int64(-1))}, false},
		"description cleared":    {ItemChanges{DescriptionSet: true}, true},
		"2000-char description":  {ItemChanges{DescriptionSet: true, Description: ptr(strings.Repeat("x", 2000))}, true},
		"2001-char description":  {ItemChanges{DescriptionSet: true, Description: ptr(strings.Repeat("x", 2001))}, false},
		"visibility only":        {ItemChanges{Visible: ptr(false)}, true},
		"kitchen display only":   {ItemChanges{ShowInKitchen: ptr(true)}, true},
		"several, one too large": {ItemChanges{Name: ptr("Soup"), BasePriceMinor: ptr(int64(2_000_000_000))}, false},
	} {
		err := c.changes.Check()
		if (err == nil) != c.valid {
			t.Errorf("%s: %v", name, err)
		}
		if err != nil {
			if k, _ := fault.Of(err); k != fault.Invalid {
				t.Errorf("%s: kind %v", name, k)
			}
		}
	}
}

func TestAddItemsCheck(t *testing.T) {
	id := func(i int) string {
		return fmt.Sprintf("a0000000-0000-4000-8000-%012d", i)
	}
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = id(i)
		}
		return out
	}
	for name, c := range map[string]struct {
		a     AddItems
		valid bool
	}{
		"one":           {AddItems{ItemIDs: many(1)}, true},
		"fifty":         {AddItems{ItemIDs: many(50)}, true},
		"fifty-one":     {AddItems{ItemIDs: many(51)}, false},
		"none":          {AddItems{}, false},
		"repeated":      {AddItems{ItemIDs: []string{id(1), id(1)}}, false},
		"not a uuid":    {AddItems{ItemIDs: []string{"x"}}, false},
		"upper case":    {AddItems{ItemIDs: []string{strings.ToUpper(id(1))}}, true},
		"negative hint": {AddItems{ItemIDs: many(1), ExpectedItemCount: -1}, false},
	} {
		if err := c.a.Check(); (err == nil) != c.valid {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCheckBatchBounds(t *testing.T) {
	base := func() contracts.CatalogBatch {
		return contracts.CatalogBatch{BatchID: "5d1e7c3a-0000-4000-8000-000000000001", Target: contracts.CatalogBatchTarget{Mode: contracts.CatalogTargetNewDraft},
			Document: contracts.CatalogDocument{Menu: contracts.CatalogMenu{Ref: "m", Name: "Draft"},
				MenuCategories: []contracts.CatalogMenuCategory{{Ref: "c", Name: "Soups"}},
				MenuItems:      []contracts.CatalogMenuItem{{Ref: "i", CategoryRef: "c", Name: "Soup", BasePriceMinor: 100, ProductType: "food"}}}}
	}
	if err := CheckBatch(base()); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(b *contracts.CatalogBatch){
		"a 65-character ref":         func(b *contracts.CatalogBatch) { b.Document.MenuItems[0].Ref = strings.Repeat("r", 65) },
		"an empty ref":               func(b *contracts.CatalogBatch) { b.Document.MenuCategories[0].Ref = "" },
		"a price over the bound":     func(b *contracts.CatalogBatch) { b.Document.MenuItems[0].BasePriceMinor = 1_000_000_001 },
		"no product type":            func(b *contracts.CatalogBatch) { b.Document.MenuItems[0].ProductType = "" },
		"alcohol over 100%":          func(b *contracts.CatalogBatch) { b.Document.MenuItems[0].AlcoholPercentage = ptr(101.0) },
		"a new draft with a menu id": func(b *contracts.CatalogBatch) { b.Target.MenuID = ptr("5d1e7c3a-0000-4000-8000-000000000002") },
		"existing categories, new": func(b *contracts.CatalogBatch) {
			b.Document.ExistingMenuCategories = []contracts.CatalogExistingCategory{{Ref: "x", CategoryID: b.BatchID}}
		},
		"a combo without components": func(b *contracts.CatalogBatch) {
			b.Document.Combos = []contracts.CatalogCombo{{Ref: "k", Name: "Combo"}}
		},
		"a product of no category": func(b *contracts.CatalogBatch) {
			b.Document.Products = []contracts.CatalogProduct{{Ref: "p", ProductCategoryRef: "none", Name: "P", Unit: "kg"}}
		},
		"an option group picking 0": func(b *contracts.CatalogBatch) {
			b.Document.OptionGroups = []contracts.CatalogOptionGroup{{Ref: "g", Name: "G"}}
		},
		"an option ref used twice": func(b *contracts.CatalogBatch) {
			b.Document.OptionGroups = []contracts.CatalogOptionGroup{{Ref: "g", Name: "G", MaxSelections: 1, Options: []contracts.CatalogOption{{Ref: "o", Name: "A"}, {Ref: "o", Name: "B"}}}}
		},
		"an existing draft, no menu": func(b *contracts.CatalogBatch) {
			b.Target = contracts.CatalogBatchTarget{Mode: contracts.CatalogTargetExistingDraft, ExpectedRevision: ptr("1")}
		},
	} {
		b := base()
		change(&b)
		err := CheckBatch(b)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if k, _ := fault.Of(err); k != fault.Invalid {
			t.Errorf("%s: kind %v", name, k)
		}
	}
}
