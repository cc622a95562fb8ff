package api

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/identity/internal/domain"
)

// ActivitySource asks the events service what apps did under their grants
// (contracts.ConnectedAppsPath); nil when EVENTS_URL is not set.
type ActivitySource func(ctx context.Context, q contracts.ConnectedAppsQuery) (contracts.ConnectedAppsActivity, error)

// activityLimit bounds the changes shown per app.
const activityLimit = 10

// activityLine is one change an app made, in words.
type activityLine struct {
	When, Words, By string
}

// activityWords says what one event changed, in the owner's words.
func activityWords(e contracts.ActivityEvent, restaurant string) string {
	var d struct {
		Menu struct {
			Name string `json:"name"`
		} `json:"menu"`
		Publication    string `json:"publication"`
		BusinessDate   string `json:"businessDate"`
		SourceRecordID string `json:"sourceRecordId"`
	}
	_ = json.Unmarshal(e.Data, &d)
	menu := "“" + d.Menu.Name + "”"
	at := " at " + restaurant
	switch e.Type {
	case contracts.EventMenuCreated:
		return "Created the menu " + menu + at
	case contracts.EventMenuUpdated:
		return "Changed the menu " + menu + at
	case contracts.EventMenuPublished:
		if d.Publication == "online" {
			return "Set " + menu + " as the online menu" + at
		}
		return "Set " + menu + " as the POS menu" + at
	case contracts.EventCatalogImportApplied:
		return "Imported a catalog into the menu " + menu + at
	case contracts.EventPaymentCorrectionApplied:
		return "Applied a payment-method correction for receipt " + d.SourceRecordID + ", " + d.BusinessDate + at
	case contracts.EventPaymentCorrectionUndone:
		return "Undid a payment-method correction for receipt " + d.SourceRecordID + ", " + d.BusinessDate + at
	case contracts.EventRefundRecorded:
		return "Recorded a refund" + at
	case contracts.EventOrderCreated:
		return "Created an order" + at
	case contracts.EventOrderUpdated:
		return "Changed an order" + at
	case contracts.EventOrderRefunded:
		return "Refunded an order" + at
	}
	return "Made a change (" + e.Type + ")" + at
}

// activity loads into views[i], in one question to the events service,
// what apps[i] did on the user's restaurants and its webhook hosts. Without
// an answer the pages say so and show the rest.
func (a account) activity(ctx context.Context, reach domain.Reach, apps []domain.ConnectedApp, names appNames, views []appView) {
	if a.p.activity == nil || len(apps) == 0 {
		return
	}
	q := contracts.ConnectedAppsQuery{Limit: activityLimit}
	for _, app := range apps {
		q.Apps = append(q.Apps, contracts.ConnectedAppRef{ClientID: app.Coverage.Grant.ClientID, GrantID: app.Coverage.Grant.ID})
	}
	for id := range reach.Restaurants {
		q.RestaurantIDs = append(q.RestaurantIDs, id)
	}
	slices.Sort(q.RestaurantIDs)
	q.RestaurantIDs = q.RestaurantIDs[:min(len(q.RestaurantIDs), contracts.MaxConnectedAppRestaurants)]
	got, err := a.p.activity(ctx, q)
	if err == nil && len(got.Apps) != len(apps) {
		err = fmt.Errorf("the events service answered %d apps for %d", len(got.Apps), len(apps))
	}
	if err != nil {
		slog.WarnContext(ctx, "connected app activity", "error", err)
		for i := range views {
			views[i].ActivityUnavailable = true
		}
		return
	}
	for i, app := range apps {
		a.showActivity(ctx, app, got.Apps[i], names, &views[i])
	}
}

// showActivity puts one app's changes, in words, and webhook hosts into v.
func (a account) showActivity(ctx context.Context, app domain.ConnectedApp, got contracts.ConnectedAppActivity, names appNames, v *appView) {
	v.ActivityShown = true
	restaurants := map[string]string{}
	for _, r := range app.Coverage.Restaurants {
		restaurants[r.ID] = r.Name
	}
	name := func(id string) string {
		if n, ok := restaurants[id]; ok {
			return n
		}
		return "a restaurant no longer covered"
	}
	for _, e := range got.Events {
		line := activityLine{When: dateTime(e.OccurredAt), Words: activityWords(e, name(e.RestaurantID))}
		if u, ok := names.user(ctx, a.p.repo, e.UserID); ok {
			line.By = u.Name
		}
		v.Activity = append(v.Activity, line)
	}
	for _, h := range got.WebhookHosts {
		w := h.Host + " (" + name(h.RestaurantID)
		if h.Disabled {
			w += ", disabled"
		}
		if !slices.Contains(v.WebhookHosts, w+")") {
			v.WebhookHosts = append(v.WebhookHosts, w+")")
		}
	}
}
