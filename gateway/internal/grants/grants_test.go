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

// TestForget: a forgotten grant is asked for again; forgetting a client
// forgets its grants only; a lookup that was on its way to identity while a
// grant was forgotten is answered but not kept, since it may hold what was
// just dropped.
func TestForget(t *testing.T) {
	keys, err := internalctx.ParseKeys("k1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=")
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		id := r.URL.Path[len("/internal/v1/grants/"):]
		if id == "slow" {
			<-hold
		}
		client := "c"
		if id == "other" {
			client = "d"
		}
		_ = json.NewEncoder(w).Encode(contracts.Grant{GrantID: id, ClientID: client, Status: "active", ClientStatus: "approved", ExpiresAt: time.Now().Add(time.Hour)})
	}))
	defer srv.Close()
	s := NewStore(srv.URL, keys, srv.Client(), time.Minute, time.Minute)
	get := func(id string) {
		t.Helper()
		if _, err := s.Get(context.Background(), Caller{GrantID: id}); err != nil {
			t.Fatal(err)
		}
	}
	step := func(what string, f func(), wantCalls int32) {
		t.Helper()
		before := calls.Load()
		f()
		if got := calls.Load() - before; got != wantCalls {
			t.Errorf("%s: %d calls to identity, want %d", what, got, wantCalls)
		}
	}
	step("first lookups", func() { get("g1"); get("g2"); get("other") }, 3)
	step("cached", func() { get("g1"); get("g2"); get("other") }, 0)
	step("g1 forgotten", func() { s.ForgetGrant("g1"); get("g1"); get("g2") }, 1)
	step("client c forgotten", func() { s.ForgetClient("c"); get("g1"); get("g2"); get("other") }, 2)
	step("all forgotten", func() { s.ForgetAll(); get("g1"); get("g2"); get("other") }, 3)

	done := make(chan struct{})
	go func() { get("slow"); close(done) }()
	for calls.Load() < 10 {
		time.Sleep(time.Millisecond)
	}
	s.ForgetGrant("slow")
	close(hold)
	<-done
	step("a lookup that overlapped a forget is not kept", func() { get("slow") }, 1)
	step("the next one is", func() { get("slow") }, 0)
}
