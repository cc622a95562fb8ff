package apispec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"partnerapi.dev/pkg/apispec/internal/specgen"
)

// namingSetB maps each set-A name of the menu resources to its set-B name:
// the contract's Naming variants table, plus the names it leaves open, named
// the same way (catalogItemIds, expectedCurrentOnlineMenuId, posMenuId,
// onlineMenuId).
var namingSetB = map[string]string{
	"menuId":                      "menuPublicId",
	"catalogItemId":               "menuItemPublicId",
	"categoryId":                  "categoryPublicId",
	"basePriceMinor":              "priceMinor",
	"isPosMenu":                   "activeForPos",
	"isOnlineMenu":                "onlineOrdering",
	"previousPosMenuId":           "previousActiveMenuPublicId",
	"previousOnlineMenuId":        "previousOnlineMenuPublicId",
	"addedCatalogItemIds":         "addedMenuItemPublicIds",
	"expectedCurrentPosMenuId":    "expectedCurrentActiveMenuPublicId",
	"catalogItemIds":              "menuItemPublicIds",
	"expectedCurrentOnlineMenuId": "expectedCurrentOnlineMenuPublicId",
	"posMenuId":                   "activeMenuPublicId",
	"onlineMenuId":                "onlineMenuPublicId",
}

// orderRecords are the schemas of order data: their menu and item
// references are order fields, not menu resources, and keep their names in
// both sets.
var orderRecords = map[string]bool{"OrderLine": true, "RefundEvent": true}

var namingSetBDocument = sync.OnceValues(func() ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(document, &doc); err != nil {
		return nil, err
	}
	paths := doc["paths"].(map[string]any)
	renamed := make(map[string]any, len(paths))
	for p, item := range paths {
		p = strings.NewReplacer("{menuId}", "{menuPublicId}", "{catalogItemId}", "{menuItemPublicId}").Replace(p)
		if strings.HasSuffix(p, "/menus/pos") {
			p = strings.TrimSuffix(p, "pos") + "active"
		}
		if err := renameToSetB(item, p); err != nil {
			return nil, err
		}
		renamed[p] = item
	}
	doc["paths"] = renamed
	components := doc["components"].(map[string]any)
	for name, schema := range components["schemas"].(map[string]any) {
		if orderRecords[name] {
			continue
		}
		if err := renameToSetB(schema, "#/components/schemas/"+name); err != nil {
			return nil, err
		}
	}
	if err := renameToSetB(components["parameters"], "#/components/parameters"); err != nil {
		return nil, err
	}
	info := doc["info"].(map[string]any)
	const setA = "This document describes set A (default):"
	desc, _ := info["description"].(string)
	if !strings.Contains(desc, setA) {
		return nil, fmt.Errorf("info.description does not say %q", setA)
	}
	info["description"] = strings.Replace(desc, setA, "This document describes set B. Set A (the default) uses", 1)
	return specgen.Encode(doc)
})

// renameToSetB renames, in place, property names, required entries, path
// parameter names and quoted names in descriptions.
func renameToSetB(v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		if props, ok := v["properties"].(map[string]any); ok {
			for a, b := range namingSetB {
				if p, ok := props[a]; ok {
					if _, taken := props[b]; taken {
						return fmt.Errorf("%s: both %s and %s", at, a, b)
					}
					delete(props, a)
					props[b] = p
				}
			}
		}
		if req, ok := v["required"].([]any); ok {
			for i, r := range req {
				if b, ok := namingSetB[r.(string)]; ok {
					req[i] = b
				}
			}
		}
		if v["in"] == "path" {
			if b, ok := namingSetB[v["name"].(string)]; ok {
				v["name"] = b
			}
		}
		if ex, ok := v["example"]; ok {
			v["example"] = renameExample(ex)
		}
		if d, ok := v["description"].(string); ok {
			for a, b := range namingSetB {
				d = strings.ReplaceAll(d, "`"+a+"`", "`"+b+"`")
			}
			v["description"] = d
		}
		for k, e := range v {
			if err := renameToSetB(e, at+"/"+k); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := renameToSetB(e, fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// renameExample renames the object keys of an example value, at any depth.
func renameExample(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if b, ok := namingSetB[k]; ok {
				k = b
			}
			out[k] = renameExample(e)
		}
		return out
	case []any:
		for i, e := range v {
			v[i] = renameExample(e)
		}
	}
	return v
}

// ToNamingSetB renames, at any depth, the object keys of a JSON document
// that set B renames (a menu resource written with set-A names, such as a
// menu event's data); numbers and strings pass through as written.
func ToNamingSetB(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(renameExample(v)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// NamingSetB returns the OpenAPI document as served by a deployment that
// serves menu naming set B (MENU_NAMING_SET=B): the menu resources' fields,
// path parameters and the POS menu path (/menus/active) renamed; everything
// else as in JSON. The caller must not modify the slice.
func NamingSetB() []byte {
	b, err := namingSetBDocument()
	if err != nil {
		panic("apispec: naming set B: " + err.Error())
	}
	return b
}

// NamingSetBFields returns the menu resources' field names of set B by
// their set-A name (a copy), for a service that serves set B to rename its
// answers and read set-B request bodies.
func NamingSetBFields() map[string]string {
	out := make(map[string]string, len(namingSetB))
	for a, b := range namingSetB {
		out[a] = b
	}
	return out
}
