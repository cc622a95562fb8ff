package delivery_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/delivery"
)

// TestGrantsForget: a grant the list of grant changes names is read again
// at the next delivery, though its cache lifetime has not passed; a client
// named drops its grants only; a read that overlapped a drop is not kept.
func TestGrantsForget(t *testing.T) {
	keys, err := internalctx.ParseKeys("k1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=")
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	status := atomic.Value{}
	status.Store("active")
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		id := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		if id == "slow" {
			<-hold
		}
		client := "c"
		if id == "other" {
			client = "d"
		}
		_ = json.NewEncoder(w).Encode(contracts.Grant{GrantID: id, ClientID: client, Status: status.Load().(string), ClientStatus: "approved", ExpiresAt: time.Now().Add(time.Hour)})
	}))
	defer srv.Close()
	g := &delivery.Grants{IdentityURL: srv.URL, Keys: keys, Client: srv.Client(), TTL: time.Hour}
	ctx := context.Background()
	get := func(id string) *contracts.Grant {
		t.Helper()
		gr, err := g.Get(ctx, id, "c")
		if err != nil || gr == nil {
			t.Fatal(err)
		}
		return gr
	}
	get("g1")
	get("other")
	status.Store("revoked")
	if gr := get("g1"); gr.Status != "active" {
		t.Fatal("the cache was not used")
	}
	g.ForgetGrant("g1")
	if gr := get("g1"); gr.Status != "revoked" {
		t.Fatalf("after ForgetGrant: %s", gr.Status)
	}
	before := calls.Load()
	g.ForgetClient("c")
	get("g1")
	get("other")
	if n := calls.Load() - before; n != 1 {
		t.Fatalf("ForgetClient(c): %d reads, want 1 (its grant only)", n)
	}

	done := make(chan struct{})
	go func() { get("slow"); close(done) }()
	for calls.Load() == before+1 {
		time.Sleep(time.Millisecond)
	}
	g.ForgetAll()
	close(hold)
	<-done
	before = calls.Load()
	get("slow")
	if calls.Load() != before+1 {
		t.Fatal("a read that overlapped a drop was kept")
	}
}
