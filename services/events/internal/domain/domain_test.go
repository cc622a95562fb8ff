package domain_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/events/internal/domain"
)

func TestTypeFilter(t *testing.T) {
	for _, c := range []struct {
		param   string
		match   []string
		noMatch []string
		bad     bool
	}{
		{param: "", bad: true},
		{param: "order.*", match: []string{"order.created", "order.refunded"}, noMatch: []string{"menu.created", "orders.created"}},
		{param: "menu.created,order.updated", match: []string{"menu.created", "order.updated"}, noMatch: []string{"menu.updated"}},
		{param: "catalog_import.*,refund_event.recorded", match: []string{"catalog_import.applied", "refund_event.recorded"}, noMatch: []string{"order.created"}},
		{param: "order", match: []string{"order"}, noMatch: []string{"order.created"}},
		{param: "Order.*", bad: true},
		{param: "order.*.x", bad: true},
		{param: "*", bad: true},
		{param: "order.created,", bad: true},
		{param: strings.Repeat("order.created,", 20) + "menu.created", bad: true},
	} {
		f, err := domain.ParseTypes(c.param)
		if c.bad {
			if k, _ := fault.Of(err); k != fault.Invalid {
				t.Errorf("%q: %v, want invalid", c.param, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.param, err)
		}
		for _, m := range c.match {
			if !f.Match(m) {
				t.Errorf("%q does not match %s", c.param, m)
			}
		}
		for _, m := range c.noMatch {
			if f.Match(m) {
				t.Errorf("%q matches %s", c.param, m)
			}
		}
	}
}

func TestVisibleNeedsEveryScopeOfTheType(t *testing.T) {
	for typ, need := range contracts.EventScopes {
		if !domain.Visible(typ, need) {
			t.Errorf("%s hidden from its own scopes", typ)
		}
		for i := range need {
			less := append(append([]string{}, need[:i]...), need[i+1:]...)
			if domain.Visible(typ, less) {
				t.Errorf("%s visible without %s", typ, need[i])
			}
		}
	}
	if domain.Visible("order.deleted", []string{contracts.ScopeRestaurantRead, contracts.ScopeOrdersRead}) {
		t.Error("an unknown type is visible")
	}
}

func TestCheckAppendNormalises(t *testing.T) {
	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.FixedZone("EET", 2*3600))
	e := contracts.EventRecord{ID: "evt_" + strings.Repeat("A", 26), Type: contracts.EventOrderCreated,
		RestaurantID: "0B5A3C1E-8F51-4A0E-9B8E-1C1F0E6D2A01", OccurredAt: at, Data: json.RawMessage(`{}`)}
	out, err := domain.CheckAppend(contracts.EventAppend{Source: "orders", Events: []contracts.EventRecord{e, e}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].RestaurantID != "0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01" || out[0].OccurredAt.Location() != time.UTC {
		t.Fatalf("%+v", out)
	}
	many := make([]contracts.EventRecord, domain.MaxAppendEvents+1)
	for i := range many {
		many[i] = e
	}
	if _, err := domain.CheckAppend(contracts.EventAppend{Source: "orders", Events: many}); err == nil {
		t.Fatal("an oversized batch passed")
	}
	big := e
	big.Data = json.RawMessage(`{"x":"` + strings.Repeat("a", domain.MaxEventData) + `"}`)
	if _, err := domain.CheckAppend(contracts.EventAppend{Source: "orders", Events: []contracts.EventRecord{big}}); err == nil {
		t.Fatal("oversized data passed")
	}
}
