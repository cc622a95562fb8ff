package grants

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
)

func TestCachingSharingAndNegativeResults(t *testing.T) {
	keys, err := internalctx.ParseKeys("k1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=")
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		ic, err := keys.Verify(r.Header.Get(internalctx.Header))
		if err != nil || ic.ClientID != "c" || ic.RequestID != "r" {
			w.WriteHeader(401)
			return
		}
		time.Sleep(50 * time.Millisecond)
		if r.URL.Path != "/internal/v1/grants/g1" {
			w.WriteHeader(404)
			return
		}
		_ = json.NewEncoder(w).Encode(contracts.Grant{GrantID: "g1", ClientID: "c", UserID: "u", ClientStatus: "approved", Status: "active",
			ExpiresAt: time.Now().Add(time.Hour), Boundary: "restaurant", Restaurants: []contracts.GrantRestaurant{{RestaurantID: "AB-1"}}})
	}))
	defer srv.Close()
	s := NewStore(srv.URL, keys, srv.Client(), time.Minute, time.Minute)
	who := Caller{ClientID: "c", UserID: "u", GrantID: "g1", RequestID: "r"}
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, err := s.Get(context.Background(), who)
			if err != nil || !g.Usable(time.Now()) || g.Restaurant("ab-1") == nil {
				t.Errorf("%v %+v", err, g)
			}
		}()
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Errorf("%d calls for 10 concurrent misses", calls.Load())
	}
	who.GrantID = "missing"
	for i := 0; i < 3; i++ {
		if _, err := s.Get(context.Background(), who); !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
	}
	if calls.Load() != 2 {
		t.Errorf("negative result not cached: %d calls", calls.Load())
	}
	srv.Close()
	who.GrantID = "other"
	if _, err := s.Get(context.Background(), who); !errors.Is(err, ErrUnavailable) {
		t.Errorf("identity down: %v", err)
	}
}

func TestRevokedTokensOfAGrant(t *testing.T) {
	keys, err := internalctx.ParseKeys("k1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"grantId":"g1","clientId":"c","userId":"u","clientStatus":"approved","status":"active","expiresAt":"2999-01-01T00:00:00Z",
			"boundary":"restaurant","restaurants":[],"organizations":[],"revokedTokenFamilies":["f1"],"revokedTokenIds":["j1"]}`))
	}))
	defer srv.Close()
	g, err := NewStore(srv.URL, keys, srv.Client(), time.Minute, time.Minute).Get(context.Background(), Caller{GrantID: "g1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id, family string
		want       bool
	}{{"j1", "", true}, {"j2", "f1", true}, {"j2", "f2", false}, {"", "", false}, {"f1", "j1", false}} {
		if got := g.Revokes(c.id, c.family); got != c.want {
			t.Errorf("Revokes(%q, %q) = %v", c.id, c.family, got)
		}
	}
}
