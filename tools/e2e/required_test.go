package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/tools/seed"
	"partnerapi.dev/tools/system"
)

// baseOverrides change a synthesized or example body where a field's
// requirement depends on another field, as the document says: a correction
// preview with action "correct" needs toMethodKey, one with "undo" refuses it.
var baseOverrides = map[string]map[string]any{
	"previewPaymentCorrection": {"action": "undo"},
}

// unreachableHook is the webhook URL of these bodies: https and a host name
// under .invalid, which never resolves, so every environment's rules accept it
// and nothing is delivered to it.
const unreachableHook = "https://hooks.example.invalid/"

// alternatives are optional fields of which the document asks for at least
// one (in the operation's description or the fields' own): a body without
// one of them carries another instead, with this value.
var alternatives = map[string]map[string]any{
	"replayWebhookEvents":   {"afterSeq": 0, "since": "2026-01-01T00:00:00Z"},
	"updateWebhookEndpoint": {"disabled": false, "url": unreachableHook, "eventTypes": []string{"menu.updated"}},
}

// requiredFields holds the document's required lists to the server: for the
// top-level fields of every write body, a body without a required field is
// 400 naming it, and a body without an optional field is no 400 naming it;
// for the entities of a catalog-import document, the plan calls a required
// field's absence an error and an optional one's none.
func requiredFields(t *testing.T, sys *system.Stack, restaurant string) {
	token := allScopesToken(t, partnerctlBinary(t), sys, seed.OwnerEmail)
	doc, err := apispec.Load()
	if err != nil {
		t.Fatal(err)
	}
	rpath := "/v1/restaurants/" + restaurant
	st, msg, created := send(t, sys, http.MethodPost, rpath+"/menus", token, map[string]any{"name": "Required fields", "idempotencyKey": uuid.NewString()})
	if st != 201 {
		t.Fatalf("create a draft: %d %s", st, msg)
	}
	st, msg, endpoint := send(t, sys, http.MethodPost, rpath+"/webhook-endpoints", token, map[string]any{
		"url": unreachableHook, "eventTypes": []string{"menu.updated"}, "idempotencyKey": uuid.NewString()})
	if st != 201 {
		t.Fatalf("create a webhook endpoint: %d %s", st, msg)
	}
	params := map[string]string{
		"restaurantId":  restaurant,
		"menuId":        created["menu"].(map[string]any)["menuId"].(string),
		"catalogItemId": uuid.NewString(),
		"endpointId":    endpoint["endpoint"].(map[string]any)["id"].(string),
		"deliveryId":    "1",
	}

	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			media := op.RequestBody.Value.Content.Get("application/json")
			if media == nil || media.Schema == nil {
				continue
			}
			schema := media.Schema.Value
			concrete := path
			for name, v := range params {
				concrete = strings.ReplaceAll(concrete, "{"+name+"}", v)
			}
			t.Run(op.OperationID, func(t *testing.T) {
				base := baseBody(t, media)
				for k, v := range baseOverrides[op.OperationID] {
					base[k] = v
				}
				for _, field := range slices.Sorted(func(yield func(string) bool) {
					for name := range schema.Properties {
						if !yield(name) {
							return
						}
					}
				}) {
					body := clone(base)
					delete(body, field)
					if _, ok := schema.Properties["idempotencyKey"]; ok && field != "idempotencyKey" {
						body["idempotencyKey"] = uuid.NewString()
					}
					if _, ok := alternatives[op.OperationID][field]; ok {
						for other, v := range alternatives[op.OperationID] {
							if other != field {
								body[other] = v
								break
							}
						}
					}
					status, msg, _ := send(t, sys, method, concrete, token, body)
					required := slices.Contains(schema.Required, field)
					names := strings.Contains(msg, field)
					switch {
					case status >= 500:
						t.Errorf("without %s: %d %s", field, status, msg)
					case required && (status != 400 || !names):
						t.Errorf("the document requires %s, but a body without it answers %d %q", field, status, msg)
					case !required && status == 400 && names:
						t.Errorf("the document says %s is optional, but a body without it answers %d %q", field, status, msg)
					}
				}
				if op.OperationID == "planCatalogImport" {
					documentEntities(t, sys, concrete, token, base, schema)
				}
			})
		}
	}
}

// documentEntities removes each field of the first entity of each kind in
// the plan's example document and reads the plan's errors.
func documentEntities(t *testing.T, sys *system.Stack, path, token string, base map[string]any, schema *openapi3.Schema) {
	document := base["document"].(map[string]any)
	docSchema := schema.Properties["document"].Value
	for kind, entities := range document {
		list, _ := entities.([]any)
		prop := docSchema.Properties[kind]
		if len(list) == 0 || prop == nil || prop.Value.Items == nil {
			continue
		}
		entity := prop.Value.Items.Value
		for field := range entity.Properties {
			if _, present := list[0].(map[string]any)[field]; !present {
				continue // the example leaves it out: optional by example
			}
			body := clone(base)
			first := body["document"].(map[string]any)[kind].([]any)[0].(map[string]any)
			delete(first, field)
			_, _, plan := send(t, sys, http.MethodPost, path, token, body)
			at := "/" + kind + "/0/" + field
			var complaint string
			errs, _ := plan["errors"].([]any)
			for _, e := range errs {
				if m, _ := e.(map[string]any); m["path"] == at {
					complaint, _ = m["message"].(string)
				}
			}
			required := slices.Contains(entity.Required, field)
			switch {
			case required && complaint == "":
				t.Errorf("the document requires %s.%s, but the plan without it has no error at %s: %v", kind, field, at, plan["errors"])
			case !required && complaint != "":
				t.Errorf("the document says %s.%s is optional, but the plan without it says %q", kind, field, complaint)
			}
		}
	}
}

// baseBody is the operation's example body or, without one, a body
// synthesized from the schema.
func baseBody(t *testing.T, media *openapi3.MediaType) map[string]any {
	t.Helper()
	if ex, ok := media.Example.(map[string]any); ok {
		return clone(ex)
	}
	out := map[string]any{}
	for name, p := range media.Schema.Value.Properties {
		out[name] = synthesize(p.Value)
	}
	return out
}

func synthesize(s *openapi3.Schema) any {
	switch {
	case s.Const != nil:
		return s.Const
	case len(s.Enum) > 0:
		return s.Enum[0]
	case s.Type.Includes("string"):
		switch {
		case s.Format == "uuid":
			return uuid.NewString()
		case s.Format == "date":
			return "2026-07-01"
		case s.Format == "date-time":
			return time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		case s.Pattern == "^[0-9a-f]{64}$":
			return strings.Repeat("a", 64)
		}
		return "cash"
	case s.Type.Includes("integer"), s.Type.Includes("number"):
		return 0
	case s.Type.Includes("boolean"):
		return true
	}
	return nil
}

func clone(v map[string]any) map[string]any {
	raw, _ := json.Marshal(v)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// send sends body and returns the status, the error message if any, and
// the answer's data. Over the rate limit it waits as told and sends again.
func send(t *testing.T, sys *system.Stack, method, path, token string, body map[string]any) (int, string, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	for {
		req, _ := http.NewRequest(strings.ToUpper(method), sys.Gateway+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			time.Sleep(time.Duration(max(wait, 1)) * time.Second)
			continue
		}
		var e struct {
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		}
		_ = json.Unmarshal(answer, &e)
		return resp.StatusCode, e.Message, e.Data
	}
}
