package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// webhookChain walks one endpoint through every webhook write: create it,
// change its URL, rotate its secret, send a test event, retry that
// delivery, replay the restaurant's last events to it; and create a second
// endpoint and delete it. Each scenario leaves one endpoint (a restaurant
// holds at most 20).
func (l *load) webhookChain(ctx context.Context, n int) *chain {
	url := fmt.Sprintf("https://example.com/faults/%s/%d", l.runID, n)
	// The feed's head before the endpoint exists: events up to it reach
	// the endpoint only through the replay.
	var feed struct {
		Data struct {
			HeadSeq int64 `json:"headSeq"`
		} `json:"data"`
	}
	l.get(ctx, "events feed", l.path("/events?limit=1"), &feed)
	afterSeq := max(feed.Data.HeadSeq-5, 0)
	c := &chain{kind: "webhooks " + url, check: l.checkWebhookChain}
	c.head, c.afterSeq = feed.Data.HeadSeq, afterSeq
	types := []string{"menu.created"}
	endpoint := func(i int) string { return l.path("/webhook-endpoints/" + field("endpoint", "id")(c.writes[i].answer)) }
	write := func(op, method string, path func() string, body map[string]any, effect func([]byte) string) func(context.Context) *keyedWrite {
		return func(context.Context) *keyedWrite { return newKeyed(op, method, path(), body, effect) }
	}
	c.steps = []func(context.Context) *keyedWrite{
		write("createWebhookEndpoint", http.MethodPost, func() string { return l.path("/webhook-endpoints") },
			map[string]any{"url": url, "eventTypes": types}, field("endpoint", "id")),
		write("updateWebhookEndpoint", http.MethodPatch, func() string { return endpoint(0) },
			map[string]any{"url": url + "/v2"}, field("endpoint", "url")),
		write("rotateWebhookEndpointSecret", http.MethodPost, func() string { return endpoint(0) + "/rotate-secret" },
			map[string]any{"gracePeriodSeconds": 3600}, field("secret")),
		write("sendWebhookTestEvent", http.MethodPost, func() string { return endpoint(0) + "/test" },
			map[string]any{}, field("delivery", "id")),
		write("retryWebhookDelivery", http.MethodPost, func() string {
			return endpoint(0) + "/deliveries/" + field("delivery", "id")(c.writes[3].answer) + "/retry"
		}, map[string]any{}, field("delivery", "id")),
		write("replayWebhookEvents", http.MethodPost, func() string { return endpoint(0) + "/replay" },
			map[string]any{"afterSeq": afterSeq}, func(raw []byte) string { return field("enqueued")(raw) + " " + field("lastSeq")(raw) }),
		write("createWebhookEndpoint", http.MethodPost, func() string { return l.path("/webhook-endpoints") },
			map[string]any{"url": url + "/gone", "eventTypes": types}, field("endpoint", "id")),
		write("deleteWebhookEndpoint", http.MethodDelete, func() string { return endpoint(6) },
			map[string]any{}, field("id")),
	}
	return c
}

// checkWebhookChain, in the events schema and through the API: the kept
// endpoint exists once, under its changed URL (one create and one change
// per key); its secret is the rotation's and the previous one the
// creation's (rotated exactly once); one test delivery, the one retried;
// each event up to the head before its creation delivered once (by the one
// replay); the deleted endpoint is gone (a second create by its key would
// have left one).
func (l *load) checkWebhookChain(ctx context.Context, k *checker, c *chain) []string {
	if len(c.writes) != len(c.steps) {
		return nil // the replay reported it
	}
	var problems []string
	url := strings.TrimPrefix(c.kind, "webhooks ")
	bad := func(format string, args ...any) {
		problems = append(problems, c.kind+": "+fmt.Sprintf(format, args...))
	}
	for _, u := range []string{url, url + "/v2", url + "/gone"} {
		want := 0
		if u == url+"/v2" {
			want = 1
		}
		api := 0
		for _, e := range k.endpoints {
			if e == u {
				api++
			}
		}
		if db := k.count(ctx, `SELECT count(*) FROM events.webhook_endpoints WHERE url = $1`, u); db != want || api != want {
			bad("%d endpoints at %s in the database, %d through the API, want %d", db, u, api, want)
		}
	}
	id := c.writes[0].result
	var secret, previous string
	if err := k.conn.QueryRow(ctx, `SELECT secret, previous_secret FROM events.webhook_endpoints WHERE id::text = $1`, id).Scan(&secret, &previous); err != nil ||
		secret != c.writes[2].result || previous != field("secret")(c.writes[0].answer) {
		bad("secrets after one rotation do not match the answers (%v)", err)
	}
	if n := k.count(ctx, `SELECT count(*) FROM events.webhook_deliveries WHERE endpoint_id::text = $1 AND seq = 0 AND id::text = $2`, id, c.writes[3].result); n != 1 ||
		k.count(ctx, `SELECT count(*) FROM events.webhook_deliveries WHERE endpoint_id::text = $1 AND seq = 0`, id) != 1 {
		bad("want exactly one test delivery, %s", c.writes[3].result)
	}
	if c.writes[4].result != c.writes[3].result {
		bad("retried delivery %s, test delivery %s", c.writes[4].result, c.writes[3].result)
	}
	enqueued, _, _ := strings.Cut(c.writes[5].result, " ")
	replayed := k.count(ctx, `SELECT count(*) FROM events.webhook_deliveries WHERE endpoint_id::text = $1 AND seq > $2 AND seq <= $3`, id, c.afterSeq, c.head)
	twice := k.count(ctx, `SELECT count(*) FROM (SELECT seq FROM events.webhook_deliveries WHERE endpoint_id::text = $1 AND seq > $2 AND seq <= $3
		GROUP BY seq HAVING count(*) > 1) t`, id, c.afterSeq, c.head)
	events := k.count(ctx, `SELECT count(*) FROM events.events WHERE restaurant_id::text = $1 AND seq > $2 AND seq <= $3 AND type = 'menu.created'`,
		l.restaurant, c.afterSeq, c.head)
	if n, _ := strconv.Atoi(enqueued); replayed != events || twice != 0 || n < events {
		bad("replay after %d (enqueued %s): %d deliveries up to %d, %d events, %d delivered twice", c.afterSeq, enqueued, replayed, c.head, events, twice)
	}
	return problems
}
