package api

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/gofiber/fiber/v2"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/pkg/httpx"
)

// Naming sets of the menu resources (the contract's Naming variants).
const (
	NamingA = "A"
	NamingB = "B"
)

// setB maps set-A field names to set B.
var setB = apispec.NamingSetBFields()

// The document's fields that set B renames, by where they sit: a generic
// rename would be wrong here, since an option's and a combo's priceMinor
// keep their name while an item's basePriceMinor becomes priceMinor.
var (
	targetFields           = []string{"menuId"}
	existingCategoryFields = []string{"categoryId"}
	menuItemFields         = []string{"basePriceMinor"}
)

// decodeBody reads a plan or apply body strictly into v; in set B the
// set-B names are read as their set-A fields, and a set-A name is an
// unknown field.
func (h *Handlers) decodeBody(c *fiber.Ctx, v any) error {
	if h.NamingSet != NamingB {
		return httpx.DecodeJSON(c, v)
	}
	if err := httpx.CheckJSONMediaType(c.Get(fiber.HeaderContentType)); err != nil {
		return err
	}
	if err := httpx.CheckText(c.Body()); err != nil {
		return err
	}
	var body map[string]any
	dec := json.NewDecoder(bytes.NewReader(c.Body()))
	dec.UseNumber() // amounts pass through as written
	if err := dec.Decode(&body); err != nil || body == nil {
		// The strict decoder names the problem.
		return httpx.Decode(c.Body(), v)
	}
	if err := fromSetB(body["target"], targetFields); err != nil {
		return err
	}
	if doc, ok := body["document"].(map[string]any); ok {
		for _, list := range []struct {
			key    string
			fields []string
		}{{"existingMenuCategories", existingCategoryFields}, {"menuItems", menuItemFields}} {
			elems, _ := doc[list.key].([]any)
			for _, e := range elems {
				if err := fromSetB(e, list.fields); err != nil {
					return err
				}
			}
		}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return httpx.Decode(raw, v)
}

// fromSetB renames, in the object v, each set-B name of fields to its
// set-A name; a set-A name given as it is answers 400.
func fromSetB(v any, fields []string) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	for _, a := range fields {
		if _, given := obj[a]; given {
			return httpx.BadRequest("Field %q is not allowed here; this deployment names it %q.", a, setB[a])
		}
		if e, given := obj[setB[a]]; given {
			delete(obj, setB[a])
			obj[a] = e
		}
	}
	return nil
}

// renameKeys renames, in place, the keys of v (at any depth) that set B
// renames. Only for views without partner-chosen keys.
func renameKeys(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if b, ok := setB[k]; ok {
				k = b
			}
			out[k] = renameKeys(e)
		}
		return out
	case []any:
		for i, e := range v {
			v[i] = renameKeys(e)
		}
	}
	return v
}

// respond answers view under "data", in the deployment's naming set:
// for set B, rename rewrites the view as generic JSON.
func (h *Handlers) respond(c *fiber.Ctx, status int, view any, rename func(map[string]any) any) error {
	raw, err := json.Marshal(view)
	if err != nil {
		return err
	}
	if h.NamingSet == NamingB {
		var generic map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&generic); err != nil {
			return err
		}
		if raw, err = json.Marshal(rename(generic)); err != nil {
			return err
		}
	}
	c.Status(status).Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(append(append([]byte(`{"data":`), raw...), '}'))
}

// wholeViewB renames every key: for views whose keys are all field names.
func wholeViewB(v map[string]any) any { return renameKeys(v) }

// planViewB renames the plan's fields and its issues' pointers.
func planViewB(v map[string]any) any {
	out := renameKeys(v).(map[string]any)
	for _, list := range []string{"errors", "warnings"} {
		issues, _ := out[list].([]any)
		for _, is := range issues {
			if is, ok := is.(map[string]any); ok {
				if p, ok := is["path"].(string); ok {
					is["path"] = pointerB(p)
				}
			}
		}
	}
	return out
}

// pointerB is a JSON Pointer into a set-A document as it points into the
// set-B document.
func pointerB(p string) string {
	parts := strings.Split(p, "/")
	if len(parts) == 4 && (parts[1] == "menuItems" && parts[3] == "basePriceMinor" ||
		parts[1] == "existingMenuCategories" && parts[3] == "categoryId") {
		parts[3] = setB[parts[3]]
	}
	return strings.Join(parts, "/")
}

// appliedViewB renames the menu of an apply answer; ids are keyed by the
// partner's refs and keep them.
func appliedViewB(v map[string]any) any {
	v["menu"] = renameKeys(v["menu"])
	return v
}
