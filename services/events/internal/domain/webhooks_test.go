package domain_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/domain"
)

func TestCheckEndpointURL(t *testing.T) {
	cases := []struct {
		url      string
		loopback bool
		ok       bool
	}{
		{"https://partner.example.com/hooks", false, true},
		{"https://partner.example.com:8443/hooks?x=1", false, true},
		{"http://partner.example.com/hooks", false, false},
		{"http://127.0.0.1:8099/", false, false},
		{"http://127.0.0.1:8099/", true, true},
		{"http://[::1]:8099/", true, true},
		{"http://localhost:8099/", true, true},
		{"http://partner.example.com/hooks", true, false},
		{"https://user:pw@partner.example.com/", false, false},
		{"https://partner.example.com/#frag", false, false},
		{"ftp://partner.example.com/", false, false},
		{"partner.example.com/hooks", false, false},
		{"", false, false},
		{"https://partner.example.com/" + strings.Repeat("a", domain.MaxURLLength), false, false},
	}
	for _, c := range cases {
		if err := domain.CheckEndpointURL(c.url, c.loopback); (err == nil) != c.ok {
			t.Errorf("%q (loopback %v): %v", c.url, c.loopback, err)
		}
	}
}

func TestCheckEventTypes(t *testing.T) {
	orders := []string{contracts.ScopeRestaurantRead, contracts.ScopeOrdersRead}
	got, err := domain.CheckEventTypes([]string{"order.updated", "order.created"}, orders)
	if err != nil || strings.Join(got, ",") != "order.created,order.updated" {
		t.Fatalf("%v %v", got, err)
	}
	for _, types := range [][]string{nil, {}, {"menu.created"}, {"order.*"}, {"webhook.test"}, {"order.created", "refund_event.recorded"}, {"order.updated", "order.created", "order.updated"}, {"authorization.revoked"}} {
		if _, err := domain.CheckEventTypes(types, orders); err == nil {
			t.Errorf("%v accepted for an orders grant", types)
		}
	}
}

func TestRevocationDenies(t *testing.T) {
	revoked := func(grant string) domain.Event {
		return domain.Event{Type: contracts.EventAuthorizationRevoked, Data: json.RawMessage(`{"authorizationId":"` + grant + `","clientId":"c"}`)}
	}
	order := domain.Event{Type: contracts.EventOrderCreated, Data: json.RawMessage(`{}`)}
	ep := domain.Endpoint{GrantID: "g1"}
	gone := ep
	gone.GrantRevoked = true
	for _, c := range []struct {
		name    string
		ep      domain.Endpoint
		ev      domain.Event
		why     string
		handled bool
	}{
		{"its own revocation is sent", gone, revoked("g1"), "", true},
		{"before the revocation is known too", ep, revoked("g1"), "", true},
		{"another authorization's revocation", ep, revoked("g2"), "The event concerns another authorization.", true},
		{"anything after the revocation", gone, order, "The authorization was revoked.", true},
		{"the grant decides otherwise", ep, order, "", false},
	} {
		if why, handled := domain.RevocationDenies(c.ep, c.ev); why != c.why || handled != c.handled {
			t.Errorf("%s: %q %v", c.name, why, handled)
		}
	}
}

func TestJudge(t *testing.T) {
	now := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	failingSince := now.Add(-domain.DisableAfter)
	recent := now.Add(-time.Hour)
	job := func(attempts int, since *time.Time) domain.Job {
		return domain.Job{Delivery: domain.Delivery{Attempts: attempts}, Endpoint: domain.Endpoint{FailingSince: since}}
	}
	cases := []struct {
		name    string
		job     domain.Job
		a       domain.Attempt
		status  string
		next    time.Duration
		disable bool
	}{
		{"2xx", job(0, nil), domain.Attempt{Code: 204}, domain.StatusSucceeded, 0, false},
		{"first failure", job(0, nil), domain.Attempt{Code: 500}, domain.StatusPending, 5 * time.Second, false},
		{"no answer", job(1, &recent), domain.Attempt{Err: "timeout"}, domain.StatusPending, 5 * time.Minute, false},
		{"redirect is a failure", job(0, nil), domain.Attempt{Code: 302}, domain.StatusPending, 5 * time.Second, false},
		{"Retry-After longer than the schedule", job(0, nil), domain.Attempt{Code: 429, RetryAfter: "60"}, domain.StatusPending, time.Minute, false},
		{"Retry-After shorter than the schedule", job(2, &recent), domain.Attempt{Code: 503, RetryAfter: "1"}, domain.StatusPending, 30 * time.Minute, false},
		{"Retry-After as a date", job(0, nil), domain.Attempt{Code: 503, RetryAfter: now.Add(2 * time.Minute).Format(http.TimeFormat)}, domain.StatusPending, 2 * time.Minute, false},
		{"Retry-After beyond a day is bounded", job(0, nil), domain.Attempt{Code: 503, RetryAfter: "999999"}, domain.StatusPending, 24 * time.Hour, false},
		{"tenth failure", job(9, &recent), domain.Attempt{Code: 500}, domain.StatusFailed, 0, false},
		{"410", job(0, nil), domain.Attempt{Code: 410}, domain.StatusFailed, 0, true},
		{"failing for 5 days", job(0, &failingSince), domain.Attempt{Code: 500}, domain.StatusFailed, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := domain.Judge(c.job, c.a, now, 0.5)
			if o.Status != c.status || (o.DisableEndpoint != "") != c.disable {
				t.Fatalf("%+v", o)
			}
			if c.next > 0 && !o.Next.Equal(now.Add(c.next)) {
				t.Fatalf("next attempt in %s, want %s", o.Next.Sub(now), c.next)
			}
		})
	}
}

func TestGrantDenies(t *testing.T) {
	now := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	const rest = "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01"
	good := func() *contracts.Grant {
		return &contracts.Grant{Status: "active", ClientStatus: "approved", ExpiresAt: now.Add(time.Hour),
			Scopes:      []string{contracts.ScopeRestaurantRead, contracts.ScopeOrdersRead},
			Restaurants: []contracts.GrantRestaurant{{RestaurantID: rest}}}
	}
	org := good()
	org.Restaurants = nil
	org.Organizations = []contracts.GrantOrganization{{OrganizationID: "o", RestaurantIDs: []string{strings.ToUpper(rest)}}}
	cases := []struct {
		name string
		g    *contracts.Grant
		typ  string
		ok   bool
	}{
		{"covered, scopes held", good(), contracts.EventOrderCreated, true},
		{"through an organization", org, contracts.EventOrderCreated, true},
		{"test event needs no event scope", good(), domain.TestEventType, true},
		{"unknown grant", nil, contracts.EventOrderCreated, false},
		{"scope missing", good(), contracts.EventMenuCreated, false},
		{"revoked", func() *contracts.Grant { g := good(); g.Status = "revoked"; return g }(), contracts.EventOrderCreated, false},
		{"expired", func() *contracts.Grant { g := good(); g.ExpiresAt = now; return g }(), contracts.EventOrderCreated, false},
		{"client not approved", func() *contracts.Grant { g := good(); g.ClientStatus = "suspended"; return g }(), contracts.EventOrderCreated, false},
		{"restaurant not covered", func() *contracts.Grant { g := good(); g.Restaurants = nil; return g }(), contracts.EventOrderCreated, false},
	}
	for _, c := range cases {
		if why := domain.GrantDenies(c.g, rest, c.typ, now); (why == "") != c.ok {
			t.Errorf("%s: %q", c.name, why)
		}
	}
}

// Retry-After as a date reads every form net/http reads, as it reads them.
func TestParseRetryAfterReadsEveryHTTPDateForm(t *testing.T) {
	now := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	at := now.Add(90 * time.Second)
	for _, v := range []string{at.Format(http.TimeFormat), at.Format(time.RFC850), at.Format(time.ANSIC),
		now.Add(-time.Minute).Format(http.TimeFormat), "Mon, 02 Jan 2006 15:04:05 UTC", "soon"} {
		want := time.Duration(0)
		if d, err := http.ParseTime(v); err == nil && d.After(now) {
			want = d.Sub(now)
		}
		if got := domain.ParseRetryAfter(v, now); got != want {
			t.Errorf("%q: %v, want %v (net/http's)", v, got, want)
		}
	}
	if got := domain.ParseRetryAfter(at.Format(time.RFC850), now); got != 90*time.Second {
		t.Errorf("RFC 850 date: %v", got)
	}
}
