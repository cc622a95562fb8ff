// Package api serves the menu operations to the gateway, the internal
// catalog API to catalog import and the ingestion endpoint to the POS side:
// it binds and validates requests, calls the domain, whose errors declare
// their kind (pkg/fault) for httpx's one mapping to answers, and renders
// the answers in the deployment's naming set.
package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/menus/internal/domain"
)

// IngestBodyLimit caps one ingestion request (NDJSON of catalogs).
const IngestBodyLimit = 32 << 20

// Naming sets of the contract's menu resources.
const (
	NamingA = "A"
	NamingB = "B"
)

// Handlers serves the menus API.
type Handlers struct {
	Repo        domain.Repository
	Keys        *internalctx.Keyring
	IngestToken string
	// NamingSet is "A" (default) or "B".
	NamingSet string
}

const base = "/v1/restaurants/:restaurantId/menus"

// Routes registers the service's routes.
func (h *Handlers) Routes(r fiber.Router) {
	r.Post(contracts.MenusIngestPath, h.ingest)
	in := r.Group("/internal/v1/restaurants/:restaurantId", internalctx.Require(h.Keys))
	in.Get("/catalog-targets/:menuId", h.catalogTarget)
	in.Post("/catalog-batches", h.catalogBatch)

	pos := "/pos"
	if h.NamingSet == NamingB {
		pos = "/active"
	}
	g := r.Group(base, internalctx.Require(h.Keys), h.setBMessages)
	g.Get("", h.listMenus)
	g.Post("", h.createMenu)
	g.Put(pos, h.setMenu(domain.POS))
	g.Put("/online", h.setMenu(domain.Online))
	g.Get("/:menuId/items", h.listItems)
	g.Post("/:menuId/items", h.addItems)
	g.Get("/:menuId/items/:itemId", h.inspectItem)
	g.Patch("/:menuId/items/:itemId", h.editItem)
}

// App builds the public application (used by serve and by tests).
func (h *Handlers) App(ready []httpx.Check) *fiber.App {
	return httpx.New(httpx.Options{Name: "menus", BodyLimit: IngestBodyLimit, Ready: ready}, h.Routes)
}

// Internal builds the application of the internal listener
// (INTERNAL_HTTP_ADDR), which only the cluster reaches: health, readiness and
// metrics.
func Internal(ready []httpx.Check, metrics http.Handler) *fiber.App {
	return httpx.NewInternal(httpx.Options{Name: "menus", Ready: ready}, metrics, nil)
}

type tenant struct {
	id       string
	clientID string
	currency string
}

// tenantOf checks that the gateway authorized the restaurant in the path.
func tenantOf(c *fiber.Ctx) (tenant, error) {
	ic, id, err := internalctx.PathTenant(c)
	if err != nil {
		return tenant{}, err
	}
	return tenant{id: id, clientID: ic.ClientID, currency: ic.Tenant.Currency}, nil
}

// uuidParam reads a path identifier; one that is not a uuid names nothing
// (404, as the gateway answers it).
func uuidParam(c *fiber.Ctx, name string) (string, error) {
	v := strings.ToLower(c.Params(name))
	if !domain.IsUUID(v) {
		return "", httpx.NotFound()
	}
	return v, nil
}

// setBMessages names set-B fields in the domain's messages under set B
// (the api's own messages name them already).
func (h *Handlers) setBMessages(c *fiber.Ctx) error {
	err := c.Next()
	if err == nil || h.NamingSet != NamingB {
		return err
	}
	var own *httpx.Error
	if errors.As(err, &own) {
		return err
	}
	kind, declared := fault.Of(err)
	if kind != fault.Invalid && kind != fault.Conflict {
		return err
	}
	msg := setAWord.ReplaceAllStringFunc(declared.Error(), func(w string) string { return setB[w] })
	return fault.New(kind, msg)
}

// setAWord matches a set-A field name that set B renames, as a whole word.
var setAWord = func() *regexp.Regexp {
	names := make([]string, 0, len(setB))
	for a := range setB {
		names = append(names, regexp.QuoteMeta(a))
	}
	return regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
}()

// Field names of set B by their set-A name, and the reverse.
var (
	setB = apispec.NamingSetBFields()
	setA = func() map[string]string {
		m := make(map[string]string, len(setB))
		for a, b := range setB {
			m[b] = a
		}
		return m
	}()
)

// name is a field's name in the deployment's naming set.
func (h *Handlers) name(setAName string) string {
	if h.NamingSet == NamingB {
		if b, ok := setB[setAName]; ok {
			return b
		}
	}
	return setAName
}

// statusOf is the HTTP status answering a write's outcome.
func statusOf(o domain.Outcome) int {
	if o == domain.Created {
		return http.StatusCreated
	}
	return http.StatusOK
}

// respond answers data (set-A names) under "data", renamed for set B.
func (h *Handlers) respond(c *fiber.Ctx, status int, data json.RawMessage) error {
	if h.NamingSet == NamingB {
		renamed, err := renameKeys(data, setB)
		if err != nil {
			return err
		}
		data = renamed
	}
	c.Status(status).Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(append(append([]byte(`{"data":`), data...), '}'))
}

// renameKeys rewrites a JSON document with its object keys renamed through
// names, keeping the order of everything.
func renameKeys(doc []byte, names map[string]string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	out := make([]byte, 0, len(doc)+len(doc)/8)
	// For each open container: is it an object, and is a key expected next.
	type level struct{ object, key bool }
	var stack []level
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		top := len(stack) - 1
		isKey := top >= 0 && stack[top].object && stack[top].key
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			out = append(out, byte(d))
			stack = stack[:top]
			if top > 0 && stack[top-1].object {
				stack[top-1].key = true
			}
			continue
		}
		if top >= 0 && len(out) > 0 && out[len(out)-1] != '{' && out[len(out)-1] != '[' && out[len(out)-1] != ':' {
			out = append(out, ',')
		}
		switch t := tok.(type) {
		case json.Delim:
			out = append(out, byte(t))
			if top >= 0 && stack[top].object {
				stack[top].key = false
			}
			stack = append(stack, level{object: t == '{', key: t == '{'})
			continue
		case string:
			if isKey {
				if n, ok := names[t]; ok {
					t = n
				}
			}
			raw, _ := json.Marshal(t)
			out = append(out, raw...)
		case json.Number:
			out = append(out, t...)
		case bool:
			out = strconv.AppendBool(out, t)
		case nil:
			out = append(out, "null"...)
		}
		if isKey {
			out = append(out, ':')
			stack[top].key = false
		} else if top >= 0 && stack[top].object {
			stack[top].key = true
		}
	}
}

// respondValue answers a view (set-A names).
func (h *Handlers) respondValue(c *fiber.Ctx, status int, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return h.respond(c, status, raw)
}

// rename renames object keys, at any depth, through names.
func rename(v any, names map[string]string) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if n, ok := names[k]; ok {
				k = n
			}
			out[k] = rename(e, names)
		}
		return out
	case []any:
		for i, e := range v {
			v[i] = rename(e, names)
		}
	}
	return v
}

// decode reads a write body strictly into v: in set B, the set-B names are
// read as their set-A fields and a set-A name is an unknown field.
func (h *Handlers) decode(c *fiber.Ctx, v any) (json.RawMessage, error) {
	if err := httpx.CheckJSONMediaType(c.Get(fiber.HeaderContentType)); err != nil {
		return nil, err
	}
	body := c.Body()
	// The gateway caps partner bodies at 1 MiB; so does the service, whose
	// own limit is set for ingestion.
	if len(body) > httpx.DefaultBodyLimit {
		return nil, httpx.PayloadTooLarge(httpx.DefaultBodyLimit)
	}
	if h.NamingSet == NamingB {
		var generic any
		if err := httpx.Decode(body, &generic); err != nil {
			return nil, err
		}
		if k := setAKey(generic); k != "" {
			return nil, httpx.BadRequest("Field %q is not allowed here.", k)
		}
		raw, err := json.Marshal(rename(generic, setA))
		if err != nil {
			return nil, err
		}
		body = raw
	}
	if err := httpx.Decode(body, v); err != nil {
		return nil, err
	}
	return json.RawMessage(body), nil
}

// setAKey returns a set-A-only field name found in a set-B body, "" if none.
func setAKey(v any) string {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if _, ok := setB[k]; ok {
				return k
			}
			if found := setAKey(e); found != "" {
				return found
			}
		}
	case []any:
		for _, e := range v {
			if found := setAKey(e); found != "" {
				return found
			}
		}
	}
	return ""
}
