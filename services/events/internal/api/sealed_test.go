package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"partnerapi.dev/services/events/internal/domain"
	"partnerapi.dev/services/events/internal/sealed"
)

// rawText is every row of a table as text, as a database reader sees it.
func (e *env) rawText(t *testing.T, table string) string {
	t.Helper()
	var rows []string
	if err := e.db.Gorm.Raw(`SELECT t::text FROM ` + table + ` t`).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	return strings.Join(rows, "\n")
}

// Neither the endpoints (current and previous secret) nor the stored answers
// of creates and rotations, of live and deleted endpoints, hold a secret in
// clear; a replayed create still answers the secret.
func TestWebhookSecretsAreSealedAtRest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := "/v1/restaurants/" + restA + "/webhook-endpoints"
	create := createBody{URL: "http://127.0.0.1:9/hooks", EventTypes: []string{"order.created"}, IdempotencyKey: "b1111111-1111-4111-8111-111111111111"}
	r := e.call("POST", base, "client-1", manage, create)
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	created := data[endpointAnswer](t, r)
	id, first := created.Endpoint.ID, created.Secret
	r = e.call("POST", base+"/"+id+"/rotate-secret", "client-1", manage, keyed{IdempotencyKey: "c1111111-1111-4111-8111-111111111111"})
	if r.status != 200 || !strings.HasPrefix(data[endpointAnswer](t, r).Secret, "whsec_") {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}
	r = e.call("POST", base, "client-1", manage, createBody{URL: "http://127.0.0.1:9/other", EventTypes: []string{"order.created"},
		IdempotencyKey: "d1111111-1111-4111-8111-111111111111"})
	gone := data[endpointAnswer](t, r).Endpoint.ID
	if r := e.call("DELETE", base+"/"+gone, "client-1", manage, keyed{IdempotencyKey: "e1111111-1111-4111-8111-111111111111"}); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	for _, table := range []string{"webhook_endpoints", "idempotency_keys"} {
		if raw := e.rawText(t, table); strings.Contains(raw, "whsec_") || !strings.Contains(raw, "sealed:v1:t1:") {
			t.Fatalf("%s holds a secret in clear:\n%s", table, raw)
		}
	}
	if r := e.call("POST", base, "client-1", manage, create); r.status != 201 || data[endpointAnswer](t, r).Secret != first || !data[endpointAnswer](t, r).Replayed {
		t.Fatalf("replayed create: %d %s", r.status, r.body)
	}
	ep, err := e.store.Endpoint(context.Background(), domain.Owner{ClientID: "client-1", RestaurantID: restA}, id)
	if err != nil || ep.PreviousSecret != first || !strings.HasPrefix(ep.Secret, "whsec_") {
		t.Fatalf("endpoint read back: %+v %v", ep, err)
	}
}

// The migration's data step seals rows written in clear, and after a new
// key is put first it seals everything again under it, so the old key can
// be dropped.
func TestSealSecretsSealsPlaintextRowsAndRotatesTheKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, secret, prev := "5b1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_c2VjcmV0LXByZXZpb3Vz"
	now := time.Now()
	if err := e.db.Gorm.Exec(`INSERT INTO webhook_endpoints (id, restaurant_id, client_id, grant_id, url, event_types, secret, previous_secret, previous_until, created_at, updated_at)
VALUES (?, ?, 'client-1', 'g-client-1', 'http://127.0.0.1:9/hooks', '["order.created"]', ?, ?, ?, ?, ?)`, id, restA, secret, prev, now.Add(time.Hour), now, now).Error; err != nil {
		t.Fatal(err)
	}
	if err := e.db.Gorm.Exec(`INSERT INTO idempotency_keys (scope, key, request_hash, status, response) VALUES ('client-1/`+restA+`/createWebhookEndpoint', 'f1111111-1111-4111-8111-111111111111', 'h', 201, ?::jsonb)`,
		`{"endpoint":{"id":"`+id+`"},"secret":"`+secret+`","replayed":false}`).Error; err != nil {
		t.Fatal(err)
	}
	if n, err := e.store.SealSecrets(context.Background()); err != nil || n != 2 {
		t.Fatalf("sealed %d rows: %v", n, err)
	}
	check := func(kid string) {
		t.Helper()
		for _, table := range []string{"webhook_endpoints", "idempotency_keys"} {
			if raw := e.rawText(t, table); strings.Contains(raw, "whsec_") || !strings.Contains(raw, "sealed:v1:"+kid+":") {
				t.Fatalf("%s:\n%s", table, raw)
			}
		}
		ep, err := e.store.Endpoint(context.Background(), domain.Owner{ClientID: "client-1", RestaurantID: restA}, id)
		if err != nil || ep.Secret != secret || ep.PreviousSecret != prev {
			t.Fatalf("endpoint: %+v %v", ep, err)
		}
	}
	check("t1")
	if n, _ := e.store.SealSecrets(context.Background()); n != 0 {
		t.Fatalf("sealing again changed %d rows", n)
	}
	next := "t2:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))
	var err error
	if e.store.Secrets, err = sealed.Parse(next + ",t1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))); err != nil {
		t.Fatal(err)
	}
	if n, err := e.store.SealSecrets(context.Background()); err != nil || n != 2 {
		t.Fatalf("sealed again %d rows: %v", n, err)
	}
	e.store.Secrets, _ = sealed.Parse(next)
	check("t2")
}
