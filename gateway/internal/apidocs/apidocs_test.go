package apidocs

import (
	"strings"
	"testing"

	"partnerapi.dev/gateway/internal/routes"
)

// TestEachNamingSetHasItsPage: the page of each naming set documents that
// set's menu paths and not the other's.
func TestEachNamingSetHasItsPage(t *testing.T) {
	own := map[routes.NamingSet]string{routes.NamingA: "/menus/{menuId}/items", routes.NamingB: "/menus/{menuPublicId}/items"}
	for ns, path := range own {
		page, rendered := Page(ns)
		if !rendered {
			t.Fatal("the reference pages are not rendered into this build: run make apidocs (make test does)")
		}
		for other, otherPath := range own {
			if got := strings.Contains(page, otherPath); got != (other == ns) {
				t.Errorf("naming set %s's page names %s: %v, want %v", ns, otherPath, got, other == ns)
			}
		}
		if !strings.Contains(page, path) || !strings.Contains(page, "<title>Restaurant Partner API reference</title>") {
			t.Errorf("naming set %s's page is not its reference page", ns)
		}
	}
}
