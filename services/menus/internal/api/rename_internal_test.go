package api

import (
	"encoding/json"
	"reflect"
	"testing"
)

// renameKeys renames keys (not values) at any depth and keeps the order:
// the same document as decoding, renaming and encoding, byte for byte in
// key order.
func TestRenameKeys(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`{"menuId":"menuId","menus":[{"menuId":"a","isPosMenu":true,"n":1.50,"x":null},{}],"e":[],"o":{},"s":"<\u00e9>","catalogItemIds":["categoryId"]}`,
		`[{"basePriceMinor":1},[{"categoryId":[[]]}],-3e2,false]`,
		`"menuId"`,
		`{}`,
	} {
		got, err := renameKeys([]byte(doc), setB)
		if err != nil {
			t.Fatal(err)
		}
		var want, have any
		_ = json.Unmarshal([]byte(doc), &want)
		if err := json.Unmarshal(got, &have); err != nil {
			t.Fatalf("%s: %s is not JSON: %v", doc, got, err)
		}
		if !reflect.DeepEqual(rename(want, setB), have) {
			t.Fatalf("%s: got %s", doc, got)
		}
	}
	got, _ := renameKeys([]byte(`{"restaurantId":"r","menuId":"m","isPosMenu":true}`), setB)
	if string(got) != `{"restaurantId":"r","menuPublicId":"m","activeForPos":true}` {
		t.Fatalf("order: %s", got)
	}
}
