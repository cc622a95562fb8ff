package api

import (
	"encoding/json"
	"testing"
	"time"

	"partnerapi.dev/services/contracts"
)

func TestLastUsedWords(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		ago  time.Duration
		want string
	}{
		{0, "Last used within the last 5 minutes"},
		{4 * time.Minute, "Last used within the last 5 minutes"},
		{5 * time.Minute, "Last used about 5 minutes ago"},
		{59 * time.Minute, "Last used about 55 minutes ago"},
		{90 * time.Minute, "Last used about an hour ago"},
		{2 * time.Hour, "Last used about 2 hours ago"},
		{47 * time.Hour, "Last used about 47 hours ago"},
		{72 * time.Hour, "Last used on 23 November 2026"},
	} {
		at := now.Add(-c.ago)
		if got := lastUsedWords(&at, now); got != c.want {
			t.Errorf("%v ago: %q, want %q", c.ago, got, c.want)
		}
	}
	if got := lastUsedWords(nil, now); got != "Not used yet" {
		t.Errorf("never: %q", got)
	}
}

func TestActivityWords(t *testing.T) {
	for _, c := range []struct {
		typ, data, want string
	}{
		{contracts.EventMenuPublished, `{"menu":{"name":"Lunch"},"publication":"pos"}`, "Set “Lunch” as the POS menu at Kahvila Aalto"},
		{contracts.EventMenuPublished, `{"menu":{"name":"Evening"},"publication":"online"}`, "Set “Evening” as the online menu at Kahvila Aalto"},
		{contracts.EventMenuCreated, `{"menu":{"name":"Lunch"}}`, "Created the menu “Lunch” at Kahvila Aalto"},
		{contracts.EventMenuUpdated, `{"menu":{"name":"Lunch"}}`, "Changed the menu “Lunch” at Kahvila Aalto"},
		{contracts.EventCatalogImportApplied, `{"menu":{"name":"Lunch"}}`, "Imported a catalog into the menu “Lunch” at Kahvila Aalto"},
		{contracts.EventPaymentCorrectionApplied, `{"businessDate":"2026-11-15","sourceRecordId":"R-1042"}`,
			"Applied a payment-method correction for receipt R-1042, 2026-11-15 at Kahvila Aalto"},
		{contracts.EventPaymentCorrectionUndone, `{"businessDate":"2026-11-15","sourceRecordId":"R-1042"}`,
			"Undid a payment-method correction for receipt R-1042, 2026-11-15 at Kahvila Aalto"},
		{contracts.EventRefundRecorded, `{}`, "Recorded a refund at Kahvila Aalto"},
		{contracts.EventOrderCreated, `{}`, "Created an order at Kahvila Aalto"},
	} {
		if got := activityWords(contracts.ActivityEvent{Type: c.typ, Data: json.RawMessage(c.data)}, "Kahvila Aalto"); got != c.want {
			t.Errorf("%s: %q, want %q", c.typ, got, c.want)
		}
	}
}

func TestNameList(t *testing.T) {
	for names, want := range map[int]string{0: "", 1: "R1", 5: "R1, R2, R3, R4, R5", 7: "R1, R2, R3, R4, R5 and 2 more"} {
		var in []string
		for i := 1; i <= names; i++ {
			in = append(in, "R"+string(rune('0'+i)))
		}
		if got := nameList(in); got != want {
			t.Errorf("%d names: %q, want %q", names, got, want)
		}
	}
}
