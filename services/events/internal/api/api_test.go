package api_test

import (
	"strings"
	"testing"
	"time"

	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/services/contracts"
)

func TestAppendIsIdempotentAndNumbersContiguously(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a1, a2, b1 := ev(restA, contracts.EventOrderCreated), ev(restA, contracts.EventOrderUpdated), ev(restB, contracts.EventMenuCreated)
	if got := e.appendOK(a1, b1, a2); got.Appended != 3 || got.Duplicates != 0 {
		t.Fatalf("first append: %+v", got)
	}
	// The whole batch again, then an overlap with a new event and an id
	// repeated within the call.
	if got := e.appendOK(a1, b1, a2); got.Appended != 0 || got.Duplicates != 3 {
		t.Fatalf("resend: %+v", got)
	}
	a3 := ev(restA, contracts.EventOrderRefunded)
	if got := e.appendOK(a2, a3, a3); got.Appended != 1 || got.Duplicates != 2 {
		t.Fatalf("overlap: %+v", got)
	}
	r, page := e.feed("/v1/restaurants/"+restA+"/events", allScopes)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	want := []string{a1.ID, a2.ID, a3.ID}
	if len(page.Events) != len(want) {
		t.Fatalf("events %+v", page.Events)
	}
	for i, got := range page.Events {
		if got.ID != want[i] || got.Seq != int64(i+1) || got.RestaurantID != restA || string(got.Data) != `{"ref":"`+want[i]+`"}` {
			t.Errorf("event %d: %+v", i, got)
		}
	}
	if page.NextAfter != 3 || page.HeadSeq != 3 || page.OldestSeq != 1 || page.HasMore {
		t.Errorf("page %+v", page)
	}
	if _, pb := e.feed("/v1/restaurants/"+restB+"/events", allScopes); len(pb.Events) != 1 || pb.Events[0].Seq != 1 {
		t.Errorf("restaurant B: %+v", pb)
	}
}

func TestAppendRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := ev(restA, contracts.EventOrderCreated)
	bad := func(f func(*contracts.EventRecord)) contracts.EventAppend {
		x := ev(restA, contracts.EventOrderCreated)
		f(&x)
		return contracts.EventAppend{Source: "orders", Events: []contracts.EventRecord{good, x}}
	}
	for name, c := range map[string]struct {
		bearer string
		body   any
		status int
		inMsg  string
	}{
		"no token":        {"", contracts.EventAppend{Source: "orders", Events: []contracts.EventRecord{good}}, 401, ""},
		"wrong token":     {token + "x", contracts.EventAppend{Source: "orders", Events: []contracts.EventRecord{good}}, 401, ""},
		"no events":       {token, contracts.EventAppend{Source: "orders"}, 400, "events is empty"},
		"no source":       {token, contracts.EventAppend{Events: []contracts.EventRecord{good}}, 400, "source"},
		"unknown type":    {token, bad(func(x *contracts.EventRecord) { x.Type = "order.deleted" }), 400, "events[1].type"},
		"bad id":          {token, bad(func(x *contracts.EventRecord) { x.ID = "evt_1" }), 400, "events[1].id"},
		"bad restaurant":  {token, bad(func(x *contracts.EventRecord) { x.RestaurantID = "r1" }), 400, "events[1].restaurantId"},
		"no time":         {token, bad(func(x *contracts.EventRecord) { x.OccurredAt = time.Time{} }), 400, "occurredAt"},
		"data not object": {token, bad(func(x *contracts.EventRecord) { x.Data = []byte(`[1]`) }), 400, "events[1].data"},
		"unknown field":   {token, map[string]any{"source": "orders", "events": []any{}, "extra": 1}, 400, ""},
	} {
		t.Run(name, func(t *testing.T) {
			r := e.appendRaw(c.bearer, c.body)
			if r.status != c.status || !strings.Contains(string(r.body), c.inMsg) {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
	// Nothing of a refused call was stored.
	if _, p := e.feed("/v1/restaurants/"+restA+"/events", allScopes); p.HeadSeq != 0 || len(p.Events) != 0 {
		t.Fatalf("stored after refusals: %+v", p)
	}
}

func TestFeedSkipsWhatTheGrantCannotReadButAdvances(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.appendOK(ev(restA, contracts.EventMenuCreated), ev(restA, contracts.EventOrderCreated), ev(restA, contracts.EventPaymentCorrectionApplied),
		ev(restA, contracts.EventOrderUpdated), ev(restA, contracts.EventCatalogImportApplied), ev(restA, contracts.EventMenuPublished))
	base := "/v1/restaurants/" + restA + "/events"
	for _, c := range []struct {
		name      string
		query     string
		scopes    []string
		seqs      []int64
		nextAfter int64
		hasMore   bool
	}{
		{"orders grant sees orders only, reads to the end", "", ordersOnly, []int64{2, 4}, 6, false},
		{"limit stops at the last returned", "?limit=1", ordersOnly, []int64{2}, 2, true},
		{"after continues", "?after=2&limit=1", ordersOnly, []int64{4}, 4, true},
		{"nothing visible still advances", "?after=4", ordersOnly, nil, 6, false},
		{"restaurant.read alone sees nothing", "", []string{contracts.ScopeRestaurantRead}, nil, 6, false},
		{"prefix filter", "?types=menu.*", allScopes, []int64{1, 6}, 6, false},
		{"exact filter list", "?types=order.updated,catalog_import.applied", allScopes, []int64{4, 5}, 6, false},
		{"filter and scopes both apply", "?types=menu.*,order.created", ordersOnly, []int64{2}, 6, false},
		{"all", "?limit=200", allScopes, []int64{1, 2, 3, 4, 5, 6}, 6, false},
		{"at the head", "?after=6", allScopes, nil, 6, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, p := e.feed(base+c.query, c.scopes)
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			var seqs []int64
			for _, x := range p.Events {
				seqs = append(seqs, x.Seq)
			}
			if len(seqs) != len(c.seqs) || p.NextAfter != c.nextAfter || p.HasMore != c.hasMore || p.HeadSeq != 6 {
				t.Fatalf("seqs %v nextAfter %d hasMore %v head %d", seqs, p.NextAfter, p.HasMore, p.HeadSeq)
			}
			for i := range seqs {
				if seqs[i] != c.seqs[i] {
					t.Fatalf("seqs %v, want %v", seqs, c.seqs)
				}
			}
		})
	}
}

func TestFeedRefusesBadQueriesAndOtherRestaurants(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.appendOK(ev(restA, contracts.EventOrderCreated))
	base := "/v1/restaurants/" + restA + "/events"
	for _, c := range []struct {
		path   string
		scopes []string
		tenant string
		status int
	}{
		{base + "?after=-1", allScopes, restA, 400},
		{base + "?after=x", allScopes, restA, 400},
		{base + "?limit=0", allScopes, restA, 400},
		{base + "?limit=201", allScopes, restA, 400},
		{base + "?wait=31", allScopes, restA, 400},
		{base + "?types=ORDER", allScopes, restA, 400},
		{base + "?types=order.*.x", allScopes, restA, 400},
		{base + "?cursor=1", allScopes, restA, 400},
		{base + "?after=1&after=2", allScopes, restA, 400},
		// Outside the grant: another restaurant, or no restaurant read.
		{base, allScopes, restB, 404},
		{base, []string{contracts.ScopeOrdersRead}, restA, 404},
		{"/v1/restaurants/not-a-uuid/events", allScopes, restA, 404},
	} {
		r, _ := e.feed(c.path, c.scopes, c.tenant)
		if r.status != c.status {
			t.Errorf("%s as %s: %d %s", c.path, c.tenant, r.status, r.body)
		}
		if c.status == 404 && decode[httpx.Envelope](t, r).Error != "not_found" {
			t.Errorf("%s: %s", c.path, r.body)
		}
	}
}

func TestCursorBelowTheRetainedRangeIsGone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	if _, err := e.store.Retention(ctx, e.now()); err != nil {
		t.Fatal(err)
	}
	old := []contracts.EventRecord{ev(restA, contracts.EventOrderCreated), ev(restA, contracts.EventOrderUpdated)}
	e.appendOK(old...)
	e.advance(31 * 24 * time.Hour)
	kept := ev(restA, contracts.EventOrderRefunded)
	e.appendOK(kept)
	res, err := e.store.Retention(ctx, e.now())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Dropped) == 0 || len(res.Created) == 0 {
		t.Fatalf("retention %+v", res)
	}
	base := "/v1/restaurants/" + restA + "/events"
	for _, after := range []string{"0", "1"} {
		r, _ := e.feed(base+"?after="+after, allScopes)
		body := decode[cursorExpired](t, r)
		if r.status != 410 || body.Error != "cursor_expired" || body.OldestSeq != 3 || body.RequestID == "" {
			t.Fatalf("after=%s: %d %s", after, r.status, r.body)
		}
	}
	r, p := e.feed(base+"?after=2", allScopes)
	if r.status != 200 || len(p.Events) != 1 || p.Events[0].ID != kept.ID || p.Events[0].Seq != 3 || p.OldestSeq != 3 || p.HeadSeq != 3 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	// A dropped day's ids are forgotten with it; the retained one stays
	// deduplicated.
	if got := e.appendOK(kept); got.Duplicates != 1 {
		t.Fatalf("resend of a kept event: %+v", got)
	}
	// A restaurant whose every event expired keeps its numbers.
	e.appendOK(ev(restB, contracts.EventMenuCreated))
	e.advance(31 * 24 * time.Hour)
	if _, err := e.store.Retention(ctx, e.now()); err != nil {
		t.Fatal(err)
	}
	if r, p := e.feed("/v1/restaurants/"+restB+"/events?after=1", allScopes); r.status != 200 || p.OldestSeq != 2 || p.HeadSeq != 1 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if r, _ := e.feed("/v1/restaurants/"+restB+"/events?after=0", allScopes); r.status != 410 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	e.appendOK(ev(restB, contracts.EventMenuUpdated))
	if _, p := e.feed("/v1/restaurants/"+restB+"/events?after=1", allScopes); len(p.Events) != 1 || p.Events[0].Seq != 2 {
		t.Fatalf("%+v", p)
	}
}

func TestLongPollAnswersWithTheAppendedEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.appendOK(ev(restA, contracts.EventOrderCreated))
	type answer struct {
		status int
		page   feedPage
	}
	got := make(chan answer, 1)
	go func() {
		r, p := e.feed("/v1/restaurants/"+restA+"/events?after=1&wait=30", allScopes)
		got <- answer{r.status, p}
	}()
	next := ev(restA, contracts.EventOrderUpdated)
	// An append to another restaurant does not answer the poll.
	e.appendOK(ev(restB, contracts.EventOrderUpdated))
	time.Sleep(100 * time.Millisecond)
	e.appendOK(next)
	a := <-got
	if a.status != 200 || len(a.page.Events) != 1 || a.page.Events[0].ID != next.ID || a.page.NextAfter != 2 {
		t.Fatalf("%d %+v", a.status, a.page)
	}
}
