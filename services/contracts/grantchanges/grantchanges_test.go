package grantchanges

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
)

type cache struct {
	grants, clients []string
	all             int
}

func (c *cache) ForgetGrant(id string)  { c.grants = append(c.grants, id) }
func (c *cache) ForgetClient(id string) { c.clients = append(c.clients, id) }
func (c *cache) ForgetAll()             { c.all++ }

// TestFollower: each change is applied once although identity lists it
// again within the overlap; since is identity's previous now; a reset drops
// everything; an identity that cannot be asked drops nothing.
func TestFollower(t *testing.T) {
	keys, err := internalctx.ParseKeys("k1:MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	answers := []contracts.GrantChanges{
		{Now: t0},
		{Now: t0.Add(time.Second), Changes: []contracts.GrantChange{{Seq: 1, GrantID: "g1"}, {Seq: 2, ClientID: "c1"}}},
		{Now: t0.Add(2 * time.Second), Changes: []contracts.GrantChange{{Seq: 1, GrantID: "g1"}, {Seq: 2, ClientID: "c1"}, {Seq: 3, GrantID: "g2"}}},
		{Now: t0.Add(3 * time.Second), Reset: true},
	}
	var mu sync.Mutex
	var sinces []string
	fail := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if _, err := keys.Verify(r.Header.Get(internalctx.Header)); err != nil || r.URL.Path != contracts.GrantChangesPath || fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		sinces = append(sinces, r.URL.Query().Get("since"))
		_ = json.NewEncoder(w).Encode(answers[0])
		answers = answers[1:]
	}))
	defer srv.Close()
	c := &cache{}
	f := &Follower{IdentityURL: srv.URL, Keys: keys, Client: srv.Client(), Cache: c}
	for range 4 {
		f.Poll(context.Background())
	}
	if !slices.Equal(c.grants, []string{"g1", "g2"}) || !slices.Equal(c.clients, []string{"c1"}) || c.all != 1 {
		t.Fatalf("applied %+v", c)
	}
	want := []string{"", t0.Format(time.RFC3339Nano), t0.Add(time.Second).Format(time.RFC3339Nano), t0.Add(2 * time.Second).Format(time.RFC3339Nano)}
	if !slices.Equal(sinces, want) {
		t.Fatalf("since %q, want %q", sinces, want)
	}
	mu.Lock()
	fail = true
	mu.Unlock()
	f.Poll(context.Background())
	if c.all != 1 || len(c.grants) != 2 {
		t.Fatalf("a failed read dropped something: %+v", c)
	}
}
