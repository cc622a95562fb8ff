package eventsclient_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"partnerapi.dev/pkg/config"
	"partnerapi.dev/pkg/outbox"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/contracts/eventsclient"
)

func TestSender(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		answer  string
		wantErr bool
	}{
		{"wrapped answer", 200, `{"data":{"appended":1,"duplicates":0}}`, false},
		{"plain answer", 200, `{"appended":0,"duplicates":1}`, false},
		{"unavailable", 503, `{"error":{"code":"service_unavailable"}}`, true},
		{"refused token", 401, `{}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got contracts.EventAppend
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.URL.Path != contracts.EventsAppendPath || r.Header.Get("Authorization") != "Bearer token-0123456789abcdef" {
					t.Errorf("request %s %s %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
				}
				if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
					t.Error(err)
				}
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.answer))
			}))
			defer srv.Close()
			at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			send := eventsclient.Sender(srv.URL+"/", config.Secret("token-0123456789abcdef"), "orders", nil)
			err := send(context.Background(), []outbox.Recorded{{Pos: 3, ID: "evt_01", Type: contracts.EventOrderCreated, RestaurantID: "r1", OccurredAt: at, Data: json.RawMessage(`{"orderId":"o1"}`)}})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			want := contracts.EventRecord{ID: "evt_01", Type: contracts.EventOrderCreated, RestaurantID: "r1", OccurredAt: at, Data: json.RawMessage(`{"orderId":"o1"}`)}
			if got.Source != "orders" || len(got.Events) != 1 || got.Events[0].ID != want.ID || got.Events[0].Type != want.Type ||
				!got.Events[0].OccurredAt.Equal(at) || string(got.Events[0].Data) != string(want.Data) {
				t.Fatalf("sent %+v, want one %+v from orders", got, want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg eventsclient.Config
		ok  bool
	}{
		{eventsclient.Config{}, true},
		{eventsclient.Config{URL: "http://events:8080", Token: "0123456789abcdef"}, true},
		{eventsclient.Config{URL: "http://events:8080"}, false},
		{eventsclient.Config{URL: "events:8080", Token: "0123456789abcdef"}, false},
	} {
		if err := tc.cfg.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: err %v", tc.cfg.URL, err)
		}
	}
}
