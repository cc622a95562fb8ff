package eventsclient_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"gorm.io/gorm"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/pkg/outbox"
	"partnerapi.dev/pkg/testenv"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/contracts/eventsclient"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// A recorded event reaches the append API once its transaction commits,
// and the closer stops the relay.
func TestStartRelayForwardsCommittedEvents(t *testing.T) {
	url := testenv.NewDatabase(t, "eventsclient", database.MigrateURL("svc", fstest.MapFS{}, outbox.Migration(1), outbox.TraceMigration(2), outbox.ActorMigration(3)))
	db, err := database.Open(context.Background(), database.Config{URL: config.Secret(url)}, "svc")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	var mu sync.Mutex
	var got []contracts.EventAppend
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b contracts.EventAppend
		_ = json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		got = append(got, b)
		mu.Unlock()
		w.Write([]byte(`{"data":{"appended":1,"duplicates":0}}`))
	}))
	defer srv.Close()

	closer := eventsclient.StartRelay(context.Background(), db.Gorm, eventsclient.Config{URL: srv.URL, Token: "token-0123456789abcdef"}, "menus")
	// Recorded while serving a partner request: the event carries its
	// authorization.
	partner := internalctx.NewContext(context.Background(), internalctx.Context{ClientID: "demo-partner", GrantID: "9a000000-0000-4000-8000-000000000001", UserID: "u-1"})
	if err := db.Gorm.WithContext(partner).Transaction(func(tx *gorm.DB) error {
		return outbox.Record(tx, outbox.Event{Type: contracts.EventMenuCreated, RestaurantID: "r1", Data: map[string]string{"menuId": "m1"}})
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the event was not forwarded")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The acknowledged event leaves the outbox (the relay deletes it after
	// the append answers; a relay stopped in between sends it again later).
	for left := -1; left != 0; time.Sleep(10 * time.Millisecond) {
		if err := db.Gorm.Raw(`SELECT count(*) FROM outbox_events`).Scan(&left).Error; err != nil {
			t.Fatal(err)
		}
		if left != 0 && time.Now().After(deadline) {
			t.Fatalf("%d events left after the acknowledgement", left)
		}
	}
	stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := closer.Fn(stop); err != nil {
		t.Fatal(err)
	}
	e := got[0]
	if e.Source != "menus" || len(e.Events) != 1 || e.Events[0].Type != contracts.EventMenuCreated || e.Events[0].RestaurantID != "r1" ||
		string(e.Events[0].Data) != `{"menuId":"m1"}` || len(e.Events[0].ID) != 30 || e.Events[0].OccurredAt.IsZero() ||
		e.Events[0].Actor == nil || *e.Events[0].Actor != (contracts.EventActor{ClientID: "demo-partner", GrantID: "9a000000-0000-4000-8000-000000000001", UserID: "u-1"}) {
		t.Fatalf("forwarded %+v", e)
	}
}
