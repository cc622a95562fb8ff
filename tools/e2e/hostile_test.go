package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
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

// hostileText are values no parameter or text field is meant to take:
// empty, 10 kB, NUL, right-to-left override, combining characters, a
// line break, and a lone surrogate's replacement.
var hostileText = []string{"", strings.Repeat("a", 10_000), "a\x00b", "\u202eevil", "e\u0301\u0301\u0301", "a\nb", "\ufffd", "'; DROP TABLE x; --", "%00"}

// hostileValues are the values sent in a parameter or field of schema s:
// its type's boundaries and beyond, and hostileText.
func hostileValues(s *openapi3.Schema) []string {
	out := slices.Clone(hostileText)
	switch {
	case s.Format == "date":
		out = append(out, "0000-01-01", "0001-01-01", "9999-12-31", "2025-02-29", "2026-13-01", "2026-1-1", "+2026-01-01", "20260101")
	case s.Format == "date-time":
		out = append(out, "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-01-01T24:00:00Z", "2026-01-01T00:00:00", "2026-01-01T00:00:00+25:00")
	case s.Format == "uuid":
		id := uuid.NewString()
		out = append(out, "urn:uuid:"+id, "{"+id+"}", strings.ToUpper(id), strings.ReplaceAll(id, "-", ""), id+"0")
	case s.Type.Includes("integer"), s.Type.Includes("number"):
		out = append(out, "-9223372036854775808", "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1e400", "1.5", "0x10", "-0", " 1")
		if s.Min != nil {
			out = append(out, strconv.FormatFloat(*s.Min-1, 'f', -1, 64))
		}
		if s.Max != nil {
			out = append(out, strconv.FormatFloat(*s.Max+1, 'f', -1, 64))
		}
	case s.Type.Includes("boolean"):
		out = append(out, "yes", "1", "TRUE")
	}
	if strings.Contains(s.Pattern, ":") || strings.Contains(s.Description, "HH:MM") {
		out = append(out, "24:00", "23:60", "-1:00", "7:5")
	}
	return out
}

// goName is a qualified Go identifier (domain.Filter, time.Time): the
// code's words, which no answer should show a partner.
var goName = regexp.MustCompile(`\b[a-z][a-z0-9]*\.[A-Z][A-Za-z0-9]*\b`)

// baselineQuery is a query every operation accepts: its required
// parameters with valid values (and, for the order search, the dates
// most filters need).
func baselineQuery(op *openapi3.Operation) url.Values {
	q := url.Values{}
	for _, p := range op.Parameters {
		v := p.Value
		if v.In != "query" || (!v.Required && !(op.OperationID == "searchOrders" && strings.HasSuffix(v.Name, "_date"))) {
			continue
		}
		switch s := v.Schema.Value; {
		case s.Format == "date":
			q.Set(v.Name, "2026-10-01")
		case len(s.Enum) > 0:
			q.Set(v.Name, fmt.Sprint(s.Enum[0]))
		default:
			q.Set(v.Name, fmt.Sprint(synthesize(s)))
		}
	}
	return q
}

// hostileInputs holds every operation of the document to one rule: no
// input answers 5xx. For each path and query parameter (one at a time, the
// others valid), each top-level body field, a query name sent twice, and an
// unknown field at each depth of a body, it sends boundary and hostile
// values through the gateway. Every answer must be a status the document
// lists for the operation and match its schema (apispec.ValidateResponse),
// and a 400 must name the parameter or field as the request spells it.
func hostileInputs(t *testing.T, sys *system.Stack, restaurant string) {
	token := allScopesToken(t, partnerctlBinary(t), sys, seed.OwnerEmail)
	doc, err := apispec.Load()
	if err != nil {
		t.Fatal(err)
	}
	params := pathParams(t, sys, token, restaurant)
	sent := 0
	check := func(t *testing.T, what, method, path string, q url.Values, status int, header http.Header, body []byte, names ...string) {
		t.Helper()
		sent++
		if status >= 500 {
			t.Errorf("%s: %d %s", what, status, body)
			return
		}
		apispec.ValidateResponse(t, method, path, q, status, header, body)
		var e struct{ Message string }
		_ = json.Unmarshal(body, &e)
		if name := goName.FindString(e.Message); name != "" {
			t.Errorf("%s: %d %q speaks of the code (%s)", what, status, e.Message, name)
		}
		if status != http.StatusBadRequest {
			return
		}
		for _, n := range names {
			if strings.Contains(e.Message, n) {
				return
			}
		}
		t.Errorf("%s: 400 %q names none of %q", what, e.Message, names)
	}
	start := time.Now()
	for _, path := range slices.Sorted(maps.Keys(doc.Paths.Map())) {
		item := doc.Paths.Map()[path]
		for method, op := range item.Operations() {
			concrete := path
			for name, v := range params {
				concrete = strings.ReplaceAll(concrete, "{"+name+"}", v)
			}
			t.Run(op.OperationID, func(t *testing.T) {
				base := baselineQuery(op)
				var body map[string]any
				var bodySchema *openapi3.Schema
				if op.RequestBody != nil && op.RequestBody.Value != nil {
					if media := op.RequestBody.Value.Content.Get("application/json"); media != nil && media.Schema != nil {
						body, bodySchema = baseBody(t, media), media.Schema.Value
					}
				}
				call := func(what, p string, q url.Values, b map[string]any, names ...string) {
					status, header, answer := rawCall(t, sys, method, p, q, token, b)
					check(t, what, method, concrete, q, status, header, answer, names...)
				}
				withKey := func() map[string]any {
					if body == nil {
						return nil
					}
					b := clone(body)
					if _, ok := bodySchema.Properties["idempotencyKey"]; ok {
						b["idempotencyKey"] = uuid.NewString()
					}
					return b
				}
				// Query parameters, one at a time, and each sent twice.
				for _, p := range append(op.Parameters, item.Parameters...) {
					v := p.Value
					for _, bad := range hostileValues(v.Schema.Value) {
						switch v.In {
						case "query":
							q := cloneQuery(base)
							q.Set(v.Name, bad)
							call(fmt.Sprintf("%s=%q", v.Name, trim(bad)), concrete, q, withKey(), v.Name)
							if v.Schema.Value.Format == "date" {
								// Every date of the query the same: a range
								// that is valid but for the date itself.
								var dates []string
								for _, other := range op.Parameters {
									if other.Value.In == "query" && other.Value.Schema.Value.Format == "date" {
										q.Set(other.Value.Name, bad)
										dates = append(dates, other.Value.Name)
									}
								}
								call(fmt.Sprintf("every date %q", trim(bad)), concrete, q, withKey(), dates...)
							}
						case "path":
							p := strings.Replace(path, "{"+v.Name+"}", url.PathEscape(bad), 1)
							for name, val := range params {
								p = strings.ReplaceAll(p, "{"+name+"}", val)
							}
							call(fmt.Sprintf("path %s=%q", v.Name, trim(bad)), p, base, withKey(), v.Name)
						}
					}
					if v.In == "query" && !v.Required {
						// Alone, without the parameters others may need.
						q := url.Values{v.Name: {fmt.Sprint(synthesize(v.Schema.Value))}}
						call(v.Name+" alone", concrete, q, withKey(), append(slices.Collect(maps.Keys(baselineQuery(op))), v.Name)...)
					}
					if v.In == "query" {
						q := cloneQuery(base)
						q[v.Name] = []string{fmt.Sprint(synthesize(v.Schema.Value)), fmt.Sprint(synthesize(v.Schema.Value))}
						call(v.Name+" twice", concrete, q, withKey(), v.Name)
					}
				}
				if body == nil {
					return
				}
				// Body fields, one at a time, as text and as JSON of every type.
				for _, field := range slices.Sorted(maps.Keys(bodySchema.Properties)) {
					s := bodySchema.Properties[field].Value
					values := []any{nil, true, -1, math.MaxInt64, 1e300, 1.5, []any{}, map[string]any{}, strings.Repeat("x", 10_000)}
					for _, h := range hostileValues(s) {
						values = append(values, h)
					}
					for _, bad := range values {
						b := withKey()
						b[field] = bad
						call(fmt.Sprintf("%s=%v", field, trim(fmt.Sprint(bad))), concrete, nil, b, field)
					}
				}
				// An unknown field at the top and inside each object field.
				b := withKey()
				b["zzzUnknown"] = 1
				call("unknown field", concrete, nil, b, "zzzUnknown")
				for field, v := range body {
					if inner, ok := v.(map[string]any); ok {
						b := withKey()
						nested := clone(inner)
						nested["zzzUnknown"] = 1
						b[field] = nested
						call("unknown field in "+field, concrete, nil, b, field+".zzzUnknown")
					}
				}
			})
		}
	}
	t.Logf("%d requests in %v", sent, time.Since(start).Round(time.Second))
}

// pathParams are valid path parameters: a new draft menu and webhook
// endpoint of the restaurant.
func pathParams(t *testing.T, sys *system.Stack, token, restaurant string) map[string]string {
	rpath := "/v1/restaurants/" + restaurant
	st, msg, created := send(t, sys, http.MethodPost, rpath+"/menus", token, map[string]any{"name": "Hostile inputs", "idempotencyKey": uuid.NewString()})
	if st != 201 {
		t.Fatalf("create a draft: %d %s", st, msg)
	}
	st, msg, endpoint := send(t, sys, http.MethodPost, rpath+"/webhook-endpoints", token, map[string]any{
		"url": unreachableHook, "eventTypes": []string{"menu.updated"}, "idempotencyKey": uuid.NewString()})
	if st != 201 {
		t.Fatalf("create a webhook endpoint: %d %s", st, msg)
	}
	return map[string]string{
		"restaurantId":  restaurant,
		"menuId":        created["menu"].(map[string]any)["menuId"].(string),
		"catalogItemId": uuid.NewString(),
		"orderId":       "no-such-order",
		"endpointId":    endpoint["endpoint"].(map[string]any)["id"].(string),
		"deliveryId":    "1",
	}
}

// rawCall sends a request as given, waiting out the rate limit.
func rawCall(t *testing.T, sys *system.Stack, method, path string, q url.Values, token string, body map[string]any) (int, http.Header, []byte) {
	t.Helper()
	u := sys.Gateway + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	for {
		req, err := http.NewRequest(strings.ToUpper(method), u, bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s %s: %v", method, u, err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
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
		return resp.StatusCode, resp.Header, answer
	}
}

func cloneQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = slices.Clone(v)
	}
	return out
}

func trim(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
