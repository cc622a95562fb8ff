package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/services/contracts"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The feed's answers, a page and a 410, against testdata/ (go test -update
// rewrites them).
func TestGoldenAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	at := time.Date(2026, 11, 23, 10, 15, 2, 114_000_000, time.UTC)
	fixed := func(id, typ, data string) contracts.EventRecord {
		return contracts.EventRecord{ID: "evt_" + id + strings.Repeat("0", 26-len(id)), Type: typ, RestaurantID: restA, OccurredAt: at, Data: json.RawMessage(data)}
	}
	e.appendOK(
		fixed("ORDER1", contracts.EventOrderCreated, `{"orderId": "o-1", "totalMinor": 1250}`),
		fixed("MENU1", contracts.EventMenuPublished, `{"menuId": "6a0c0e2e-0000-4000-8000-000000000001", "itemCount": 12}`),
		fixed("ORDER2", contracts.EventOrderRefunded, `{"orderId": "o-1", "refundedMinor": 250}`),
	)
	e.advance(31 * 24 * time.Hour)
	e.appendOK(fixed("ORDER3", contracts.EventOrderUpdated, `{"orderId": "o-2"}`))
	base := "/v1/restaurants/" + restA + "/events"
	golden(t, "feed-orders", e.feedBody(base+"?limit=1", ordersOnly))
	golden(t, "feed-all", e.feedBody(base, allScopes))
	// Retention drops the first day: its three events expire.
	if _, err := e.store.Retention(t.Context(), e.now()); err != nil {
		t.Fatal(err)
	}
	golden(t, "cursor-expired", e.feedBody(base+"?after=1", allScopes))
}

func (e *env) feedBody(path string, scopes []string) []byte {
	r, _ := e.feed(path, scopes)
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		e.t.Fatal(err)
	}
	if _, ok := m["request_id"]; ok {
		m["request_id"] = "…" // differs per request
	}
	raw, _ := json.MarshalIndent(map[string]any{"status": r.status, "body": m}, "", "  ")
	return append(raw, '\n')
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	file := filepath.Join("..", "..", "testdata", name+".json")
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update once)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from %s:\n%s", name, file, got)
	}
}
