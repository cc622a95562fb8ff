package apispec_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/apispec/internal/specgen"
)

func TestDocumentLoadsAndValidatesAsOpenAPI31(t *testing.T) {
	doc, err := apispec.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableSchemaFormatValidation(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatal(err)
	}
	ops := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops++
			if op.OperationID == "" || op.Summary == "" {
				t.Errorf("%s %s lacks operationId or summary", method, path)
			}
			if !strings.HasPrefix(path, "/v1/") || path == "/v1/openapi.json" {
				continue
			}
			if op.Security == nil || len(*op.Security) == 0 {
				t.Errorf("%s %s has no security requirement", method, path)
			}
			for _, code := range []string{"401", "403", "429", "503"} {
				if op.Responses.Value(code) == nil {
					t.Errorf("%s %s lacks response %s", method, path, code)
				}
			}
			for code, r := range op.Responses.Map() {
				if r.Value.Headers["X-Request-Id"] == nil || r.Value.Headers["RateLimit-Policy"] == nil {
					t.Errorf("%s %s response %s lacks X-Request-Id or RateLimit-Policy", method, path, code)
				}
			}
		}
	}
	if ops != 35 {
		t.Errorf("%d operations documented, want 22 partner operations, the accounting summary, events feed and 9 webhook endpoint extensions + 2 metadata", ops)
	}
}

func TestEmbeddedJSONIsGeneratedFromTheYAMLSource(t *testing.T) {
	src, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := specgen.Convert(src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, apispec.JSON()) {
		t.Fatal("openapi.json is stale: run `go generate ./apispec` in pkg/")
	}
}

func TestValidateResponse(t *testing.T) {
	rid := "11111111-1111-4111-8111-111111111111"
	okHeaders := http.Header{"X-Request-Id": {"req-1"}, "Ratelimit-Policy": {`"partner";q=60;w=60`}, "Ratelimit": {`"partner";r=59;t=1`}, "Content-Type": {"application/json"}}
	errHeaders := http.Header{"X-Request-Id": {"req-1"}, "Ratelimit-Policy": {`"partner";q=60;w=60`}, "Content-Type": {"application/json"}}
	page := map[string]any{"data": map[string]any{
		"restaurantId": rid, "searchScope": "date_range", "currency": "EUR", "truncated": false, "nextCursor": nil,
		"period":  map[string]any{"startDate": "2026-01-01", "endDate": "2026-01-31", "timeZone": "Europe/Helsinki", "dayStartHour": 4},
		"matches": []any{map[string]any{"orderId": "o-1", "occurredAt": "2026-01-02T10:00:00Z", "businessDate": "2026-01-02", "status": "paid", "totalAmountMinor": 1250, "items": []any{}, "itemsTruncated": false}},
	}}
	good, _ := json.Marshal(page)
	q := url.Values{"start_date": {"2026-01-01"}, "end_date": {"2026-01-31"}}
	apispec.ValidateResponse(t, "GET", "/v1/restaurants/"+rid+"/orders", q, 200, okHeaders, good)
	apispec.ValidateResponse(t, "GET", "/v1/restaurants/"+rid+"/orders", nil, 404, errHeaders, []byte(`{"error":"not_found","request_id":"req-1","message":"The requested resource does not exist or is outside the authorization."}`))
	apispec.ValidateResponse(t, "POST", "/v1/restaurants/"+rid+"/menus", nil, 503, errHeaders, []byte(`{"error":"capability_disabled","request_id":"req-1","message":"off"}`))

	page["data"].(map[string]any)["matches"].([]any)[0].(map[string]any)["status"] = "lost"
	bad, _ := json.Marshal(page)
	if err := apispec.CheckResponse("GET", "/v1/restaurants/"+rid+"/orders", nil, 200, okHeaders, bad); err == nil {
		t.Error("an unknown order status passed")
	}
	if err := apispec.CheckResponse("GET", "/v1/restaurants/"+rid+"/orders", nil, 404, okHeaders, []byte(`{"message":"x"}`)); err == nil {
		t.Error("an error body without error and request_id passed")
	}
	if err := apispec.CheckResponse("GET", "/v1/restaurants/"+rid+"/orders", nil, 200, http.Header{"Content-Type": {"application/json"}}, good); err == nil {
		t.Error("a response without X-Request-Id passed")
	}
	if err := apispec.CheckResponse("GET", "/v1/nothing", nil, 200, okHeaders, good); err == nil {
		t.Error("an undocumented path passed")
	}
	orders := "/v1/restaurants/" + rid + "/orders"
	badID := okHeaders.Clone()
	badID.Set("X-Request-Id", "not a request id")
	if err := apispec.CheckResponse("GET", orders, nil, 200, badID, good); err == nil {
		t.Error("an X-Request-Id outside its pattern passed")
	}
	if err := apispec.CheckResponse("GET", orders, nil, 418, okHeaders, good); err == nil {
		t.Error("an undocumented status passed")
	}
	html := okHeaders.Clone()
	html.Set("Content-Type", "text/html")
	if err := apispec.CheckResponse("GET", orders, nil, 200, html, good); err == nil {
		t.Error("an undocumented Content-Type passed")
	}
	if err := apispec.CheckResponse("GET", orders, nil, 200, okHeaders, []byte(`{"data":`)); err == nil {
		t.Error("a body that is not JSON passed")
	}
	for field, value := range map[string]any{"businessDate": "2026-02-30", "occurredAt": "yesterday"} {
		page["data"].(map[string]any)["matches"].([]any)[0].(map[string]any)["status"] = "paid"
		page["data"].(map[string]any)["matches"].([]any)[0].(map[string]any)[field] = value
		b, _ := json.Marshal(page)
		if err := apispec.CheckResponse("GET", orders, nil, 200, okHeaders, b); err == nil {
			t.Errorf("%s %v passed", field, value)
		}
		page["data"].(map[string]any)["matches"].([]any)[0].(map[string]any)[field] = map[string]any{"businessDate": "2026-01-02", "occurredAt": "2026-01-02T10:00:00Z"}[field]
	}
	if b, _ := json.Marshal(page); apispec.CheckResponse("GET", orders, nil, 200, okHeaders, b) != nil {
		t.Errorf("the restored page fails: %v", apispec.CheckResponse("GET", orders, nil, 200, okHeaders, b))
	}
}

func TestCheckRequestEnforcesBounds(t *testing.T) {
	rid := "11111111-1111-4111-8111-111111111111"
	h := http.Header{"Content-Type": {"application/json"}}
	if err := apispec.CheckRequest("GET", "/v1/restaurants/"+rid+"/orders", url.Values{"limit": {"20"}}, h, nil); err != nil {
		t.Errorf("limit 20: %v", err)
	}
	if err := apispec.CheckRequest("GET", "/v1/restaurants/"+rid+"/orders", url.Values{"limit": {"21"}}, h, nil); err == nil {
		t.Error("limit 21 passed")
	}
	if err := apispec.CheckRequest("GET", "/v1/restaurants/"+rid+"/orders", url.Values{"start_time": {"24:00"}}, h, nil); err == nil {
		t.Error("start_time 24:00 passed")
	}
	body := []byte(`{"name":"Lunch","idempotencyKey":"66666666-6666-4666-8666-666666666666"}`)
	if err := apispec.CheckRequest("POST", "/v1/restaurants/"+rid+"/menus", nil, h, body); err != nil {
		t.Errorf("create menu: %v", err)
	}
	if err := apispec.CheckRequest("POST", "/v1/restaurants/"+rid+"/menus", nil, h, []byte(`{"name":"","idempotencyKey":"x"}`)); err == nil {
		t.Error("empty name and bad key passed")
	}
}

// Client generators (oapi-codegen, ogen) refuse a schema with several types
// besides null and type a const without a type as any: every schema has one
// type, optionally nullable.
func TestEverySchemaHasOneTypeBesidesNull(t *testing.T) {
	var doc any
	if err := json.Unmarshal(apispec.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, problem := range schemaTypeProblems(doc, "#") {
		t.Error(problem)
	}
}

func schemaTypeProblems(v any, at string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if types, ok := v["type"].([]any); ok {
			n := 0
			for _, ty := range types {
				if ty != "null" {
					n++
				}
			}
			if n > 1 {
				out = append(out, fmt.Sprintf("%s: type %v: choose one type (nullable at most)", at, types))
			}
		}
		if _, ok := v["const"]; ok && v["type"] == nil {
			out = append(out, at+": const without a type")
		}
		for k, e := range v {
			out = append(out, schemaTypeProblems(e, at+"/"+k)...)
		}
	case []any:
		for i, e := range v {
			out = append(out, schemaTypeProblems(e, fmt.Sprintf("%s/%d", at, i))...)
		}
	}
	return out
}

// Under naming set B the document names the menu resources as set B does
// and is as valid as set A's.
func TestNamingSetBDocument(t *testing.T) {
	b := apispec.NamingSetB()
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableSchemaFormatValidation(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"/v1/restaurants/{restaurantId}/menus/active",
		"/v1/restaurants/{restaurantId}/menus/{menuPublicId}/items/{menuItemPublicId}",
		"/v1/restaurants/{restaurantId}/catalog-import/targets/{menuPublicId}",
	} {
		if doc.Paths.Find(p) == nil {
			t.Errorf("no %s", p)
		}
	}
	if len(doc.Paths.Map()) != len(mustLoad(t).Paths.Map()) {
		t.Errorf("%d paths, set A has %d", len(doc.Paths.Map()), len(mustLoad(t).Paths.Map()))
	}
	menu := doc.Components.Schemas["Menu"].Value
	for _, f := range []string{"menuPublicId", "activeForPos", "onlineOrdering"} {
		if menu.Properties[f] == nil || !slices.Contains(menu.Required, f) {
			t.Errorf("Menu lacks required %s", f)
		}
	}
	// Set-A names remain only in order records and in the text that explains both sets.
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw["info"].(map[string]any), "description")
	schemas := raw["components"].(map[string]any)["schemas"].(map[string]any)
	delete(schemas, "OrderLine")
	delete(schemas, "RefundEvent")
	rest, _ := json.Marshal(raw)
	for _, a := range []string{"menuId", "catalogItemId", "categoryId", "basePriceMinor", "isPosMenu", "isOnlineMenu", "previousPosMenuId", "addedCatalogItemIds", "expectedCurrentPosMenuId", "/menus/pos"} {
		if bytes.Contains(rest, []byte(`"`+a+`"`)) || bytes.Contains(rest, []byte("`"+a+"`")) || bytes.Contains(rest, []byte(a+`"`)) && a == "/menus/pos" {
			t.Errorf("set-A name %s in the set-B document", a)
		}
	}
	var generic any
	_ = json.Unmarshal(b, &generic)
	for _, problem := range schemaTypeProblems(generic, "#") {
		t.Error(problem)
	}
}

func mustLoad(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := apispec.Load()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// BenchmarkCheckResponse is one check of an order search page, the schemas
// compiled by the first call.
func BenchmarkCheckResponse(b *testing.B) {
	rid := "11111111-1111-4111-8111-111111111111"
	headers := http.Header{"X-Request-Id": {"req-1"}, "Ratelimit-Policy": {`"partner";q=60;w=60`}, "Ratelimit": {`"partner";r=59;t=1`}, "Content-Type": {"application/json"}}
	body := []byte(`{"data":{"restaurantId":"` + rid + `","searchScope":"date_range","currency":"EUR","truncated":false,"nextCursor":null,` +
		`"period":{"startDate":"2026-01-01","endDate":"2026-01-31","timeZone":"Europe/Helsinki","dayStartHour":4},` +
		`"matches":[{"orderId":"o-1","occurredAt":"2026-01-02T10:00:00Z","businessDate":"2026-01-02","status":"paid","totalAmountMinor":1250,"items":[],"itemsTruncated":false}]}}`)
	path := "/v1/restaurants/" + rid + "/orders"
	for b.Loop() {
		if err := apispec.CheckResponse("GET", path, nil, 200, headers, body); err != nil {
			b.Fatal(err)
		}
	}
}
