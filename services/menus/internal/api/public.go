package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/menus/internal/domain"
)

// Bounds of the item listing.
const (
	defaultItemLimit = 100
	maxItemLimit     = 500
)

type listMenusView struct {
	RestaurantID string                  `json:"restaurantId"`
	Menus        []contracts.MenuSummary `json:"menus"`
	PosMenuID    *string                 `json:"posMenuId"`
	OnlineMenuID *string                 `json:"onlineMenuId"`
}

func (h *Handlers) listMenus(c *fiber.Ctx) error {
	t, err := tenantOf(c)
	if err != nil {
		return err
	}
	if err := onlyQuery(c); err != nil {
		return err
	}
	menus, sel, err := h.Repo.Menus(c.UserContext(), t.id)
	if err != nil {
		return err
	}
	out := listMenusView{RestaurantID: t.id, Menus: make([]contracts.MenuSummary, len(menus)), PosMenuID: sel.PosMenuID, OnlineMenuID: sel.OnlineMenuID}
	for i, m := range menus {
		out.Menus[i] = domain.Summary(m)
	}
	return h.respondValue(c, http.StatusOK, out)
}

// onlyQuery refuses query parameters other than organization_id and allowed.
func onlyQuery(c *fiber.Ctx, allowed ...string) error {
	q, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return httpx.BadRequest("The query string is malformed.")
	}
	if k, _ := httpx.AllowQuery(q, false, append([]string{"organization_id"}, allowed...)...); k != "" {
		return httpx.BadRequest("Query parameter %q is not supported here.", k)
	}
	return nil
}

type listedItemView struct {
	CatalogItemID       string  `json:"catalogItemId"`
	Name                string  `json:"name"`
	Description         *string `json:"description"`
	CategoryID          string  `json:"categoryId"`
	CategoryName        string  `json:"categoryName"`
	EffectivePriceMinor int64   `json:"effectivePriceMinor"`
	BasePriceMinor      int64   `json:"basePriceMinor"`
	PriceSource         string  `json:"priceSource"`
	Availability        string  `json:"availability"`
	ProductType         string  `json:"productType"`
	OpenPrice           bool    `json:"openPrice"`
}

type itemListingView struct {
	RestaurantID string           `json:"restaurantId"`
	MenuID       string           `json:"menuId"`
	Currency     string           `json:"currency"`
	Items        []listedItemView `json:"items"`
	Truncated    bool             `json:"truncated"`
	NextAfter    *string          `json:"nextAfter"`
}

func (h *Handlers) listItems(c *fiber.Ctx) error {
	t, err := tenantOf(c)
	if err != nil {
		return err
	}
	menuID, err := uuidParam(c, "menuId")
	if err != nil {
		return err
	}
	if err := onlyQuery(c, "after", "availability", "limit"); err != nil {
		return err
	}
	f := domain.ItemFilter{RestaurantID: t.id, MenuID: menuID, Limit: defaultItemLimit}
	if v := c.Query("after"); v != "" {
		if !domain.IsUUID(v) {
			return httpx.BadRequest("after must be a uuid: pass nextAfter unchanged.")
		}
		f.After = v
	}
	switch v := c.Query("availability"); v {
	case "", domain.Available, domain.SoldOut, domain.Hidden:
		f.Availability = v
	default:
		return httpx.BadRequest("availability must be available, sold_out or hidden.")
	}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxItemLimit {
			return httpx.BadRequest("limit must be an integer from 1 to %d.", maxItemLimit)
		}
		f.Limit = n
	}
	if _, err := h.Repo.Menu(c.UserContext(), t.id, menuID); err != nil {
		return err
	}
	page, err := h.Repo.Items(c.UserContext(), f)
	if err != nil {
		return err
	}
	out := itemListingView{RestaurantID: t.id, MenuID: menuID, Currency: t.currency, Items: make([]listedItemView, len(page.Items)),
		Truncated: page.Next != nil, NextAfter: page.Next}
	for i, it := range page.Items {
		out.Items[i] = listedItemView{CatalogItemID: it.ID, Name: it.Name, Description: it.Description, CategoryID: it.CategoryID,
			CategoryName: it.CategoryName, EffectivePriceMinor: it.EffectivePriceMinor, BasePriceMinor: it.BasePriceMinor,
			PriceSource: it.PriceSource, Availability: it.Availability, ProductType: it.ProductType, OpenPrice: it.OpenPrice}
	}
	return h.respondValue(c, http.StatusOK, out)
}

type draftItemView struct {
	CatalogItemID  string  `json:"catalogItemId"`
	CategoryID     string  `json:"categoryId"`
	Name           string  `json:"name"`
	BasePriceMinor int64   `json:"basePriceMinor"`
	Description    *string `json:"description"`
	Visible        bool    `json:"visible"`
	ShowInKitchen  bool    `json:"showInKitchen"`
}

func draftItem(d domain.DraftItem) draftItemView {
	return draftItemView{CatalogItemID: d.ID, CategoryID: d.CategoryID, Name: d.Name, BasePriceMinor: d.BasePriceMinor,
		Description: d.Description, Visible: d.Visible, ShowInKitchen: d.ShowInKitchen}
}

type editTargetView struct {
	RestaurantID    string                `json:"restaurantId"`
	Menu            contracts.MenuSummary `json:"menu"`
	Item            draftItemView         `json:"item"`
	SharedMenuCount int                   `json:"sharedMenuCount"`
	CanEdit         bool                  `json:"canEdit"`
	Version         string                `json:"version"`
}

func (h *Handlers) inspectItem(c *fiber.Ctx) error {
	t, err := tenantOf(c)
	if err != nil {
		return err
	}
	menuID, err := uuidParam(c, "menuId")
	if err != nil {
		return err
	}
	itemID, err := uuidParam(c, "itemId")
	if err != nil {
		return err
	}
	if err := onlyQuery(c); err != nil {
		return err
	}
	et, err := h.Repo.EditTarget(c.UserContext(), t.id, menuID, itemID)
	if err != nil {
		return err
	}
	return h.respondValue(c, http.StatusOK, editTargetView{RestaurantID: t.id, Menu: domain.Summary(et.Menu), Item: draftItem(et.Item),
		SharedMenuCount: et.SharedMenuCount, CanEdit: et.CanEdit(), Version: et.Item.VersionString()})
}

// optional is a body field that may be absent, null or a value.
type optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

func (o *optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// writeCommon are the fields every write body has.
type writeCommon struct {
	IdempotencyKey optional[string] `json:"idempotencyKey"`
	Confirmed      optional[bool]   `json:"confirmed"`
}

// check validates the key and, when confirm, that confirmed is true.
func (w writeCommon) check(confirm bool) error {
	if !w.IdempotencyKey.Set || w.IdempotencyKey.Null || !idempotency.ValidKey(w.IdempotencyKey.Value) {
		return httpx.BadRequest("idempotencyKey is required and must be a uuid.")
	}
	if confirm && (!w.Confirmed.Set || w.Confirmed.Null || !w.Confirmed.Value) {
		return httpx.BadRequest("confirmed must be true: review the change, then confirm it.")
	}
	if !confirm && w.Confirmed.Set {
		return httpx.BadRequest("Field \"confirmed\" is not allowed here.")
	}
	return nil
}

// writeKey scopes a key to the caller, the restaurant and the operation;
// the request compared on a repeat is the path's ids and the body.
func writeKey(t tenant, operation, key string, path []string, body json.RawMessage) domain.WriteKey {
	return domain.WriteKey{Scope: t.clientID + "/" + t.id + "/" + operation, Key: key,
		Body: map[string]any{"path": path, "body": body}}
}

type createMenuRequest struct {
	writeCommon
	Name optional[string] `json:"name"`
}

type createMenuView struct {
	ActionID     string                `json:"actionId"`
	RestaurantID string                `json:"restaurantId"`
	Menu         contracts.MenuSummary `json:"menu"`
	Replayed     bool                  `json:"replayed"`
}

func (h *Handlers) createMenu(c *fiber.Ctx) error {
	t, err := tenantOf(c)
	if err != nil {
		return err
	}
	var req createMenuRequest
	body, err := h.decode(c, &req)
	if err != nil {
		return err
	}
	if err := req.check(false); err != nil {
		return err
	}
	if !req.Name.Set || req.Name.Null {
		return httpx.BadRequest("name is required.")
	}
	if err := domain.CheckMenuName(req.Name.Value); err != nil {
		return err
	}
	key := writeKey(t, "createMenu", req.IdempotencyKey.Value, nil, body)
	return h.write(c, key, func(tx domain.Tx) (domain.Outcome, any, error) {
		m, err := domain.CreateMenu(tx, t.id, req.Name.Value)
		if err != nil {
			return 0, nil, err
		}
		return domain.Created, createMenuView{ActionID: domain.NewID(), RestaurantID: t.id, Menu: domain.Summary(m)}, nil
	})
}

// write runs a write once per key and answers it (the stored answer again,
// marked replayed, for a repeat).
func (h *Handlers) write(c *fiber.Ctx, key domain.WriteKey, fn domain.WriteFunc) error {
	ans, err := h.Repo.Write(c.UserContext(), key, fn)
	if err != nil {
		return err
	}
	return h.respond(c, statusOf(ans.Outcome), ans.Data)
}

type addItemsRequest struct {
	writeCommon
	CatalogItemIDs        optional[[]string] `json:"catalogItemIds"`
	ExpectedCategoryCount optional[int]      `json:"expectedCategoryCount"`
	ExpectedItemCount     optional[int]      `json:"expectedItemCount"`
}

type addItemsView struct {
	ActionID            string                `json:"actionId"`
	RestaurantID        string                `json:"restaurantId"`
	Menu                contracts.MenuSummary `json:"menu"`
	AddedCatalogItemIDs []string              `json:"addedCatalogItemIds"`
	Replayed            bool                  `json:"replayed"`
}

func (h *Handlers) addItems(c *fiber.Ctx) error {
	t, err := tenantOf(c)
	if err != nil {
		return err
	}
	menuID, err := uuidParam(c, "menuId")
	if err != nil {
		return err
	}
	var req addItemsRequest
	body, err := h.decode(c, &req)
	if err != nil {
		return err
	}
	if err := req.check(true); err != nil {
		return err
	}
	if !req.CatalogItemIDs.Set || req.CatalogItemIDs.Null || !req.ExpectedCategoryCount.Set || req.ExpectedCategoryCount.Null ||
		!req.ExpectedItemCount.Set || req.ExpectedItemCount.Null {
		return httpx.BadRequest("%s, expectedCategoryCount and expectedItemCount are required.", h.name("catalogItemIds"))
	}
	a := domain.AddItems{MenuID: menuID, ItemIDs: req.CatalogItemIDs.Value,
		ExpectedCategoryCount: req.ExpectedCategoryCount.Value, ExpectedItemCount: req.ExpectedItemCount.Value}
	if err := a.Check(); err != nil {
		return err
	}
	key := writeKey(t, "addMenuItems", req.IdempotencyKey.Value, []string{menuID}, body)
	return h.write(c, key, func(tx domain.Tx) (domain.Outcome, any, error) {
		m, added, err := domain.AddMenuItems(tx, t.id, a)
		if err != nil {
			return 0, nil, err
		}
		return domain.Changed, addItemsView{ActionID: domain.NewID(), RestaurantID: t.id, Menu: domain.Summary(m), AddedCatalogItemIDs: added}, nil
	})
}

type itemChangesRequest struct {
	Name           optional[string] `json:"name"`
	BasePriceMinor optional[int64]  `json:"basePriceMinor"`
	Description    optional[string] `json:"description"`
	Visible        optional[bool]   `json:"visible"`
	ShowInKitchen  optional[bool]   `json:"showInKitchen"`
}

// UnmarshalJSON reads changes strictly: a field that is not reviewed is
// refused like any unknown field.
func (r *itemChangesRequest) UnmarshalJSON(b []byte) error {
	type plain itemChangesRequest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode((*plain)(r))
}

type editItemRequest struct {
	writeCommon
	ExpectedVersion optional[string]             `json:"expectedVersion"`
	Changes         optional[itemChangesRequest] `json:"changes"`
}

type editItemView struct {
	ActionID        string        `json:"actionId"`
	RestaurantID    string        `json:"restaurantId"`
	MenuID          string        `json:"menuId"`
	Item            draftItemView `json:"item"`
	PreviousVersion string        `json:"previousVersion"`
	Version         string        `json:"version"`
	Replayed        bool          `json:"replayed"`
}

func (h *Handlers) editItem(c *fiber.Ctx) error {
	t, err := tenantOf(c)
	if err != nil {
		return err
	}
	menuID, err := uuidParam(c, "menuId")
	if err != nil {
		return err
	}
	itemID, err := uuidParam(c, "itemId")
	if err != nil {
		return err
	}
	var req editItemRequest
	body, err := h.decode(c, &req)
	if err != nil {
		return err
	}
	if err := req.check(true); err != nil {
		return err
	}
	if !req.ExpectedVersion.Set || req.ExpectedVersion.Null || req.ExpectedVersion.Value == "" {
		return httpx.BadRequest("expectedVersion is required: pass the version from inspection unchanged.")
	}
	if !req.Changes.Set || req.Changes.Null {
		return httpx.BadRequest("changes is required.")
	}
	ch, err := changes(req.Changes.Value, h)
	if err != nil {
		return err
	}
	key := writeKey(t, "updateDraftMenuItem", req.IdempotencyKey.Value, []string{menuID, itemID}, body)
	return h.write(c, key, func(tx domain.Tx) (domain.Outcome, any, error) {
		before, after, err := domain.EditItem(tx, t.id, menuID, itemID, req.ExpectedVersion.Value, ch)
		if err != nil {
			return 0, nil, err
		}
		return domain.Changed, editItemView{ActionID: domain.NewID(), RestaurantID: t.id, MenuID: menuID, Item: draftItem(after),
			PreviousVersion: before.VersionString(), Version: after.VersionString()}, nil
	})
}

// changes turns the request's changes into the domain's, refusing nulls
// where a value is needed.
func changes(r itemChangesRequest, h *Handlers) (domain.ItemChanges, error) {
	var ch domain.ItemChanges
	for _, f := range []struct {
		name string
		set  bool
		null bool
	}{{"name", r.Name.Set, r.Name.Null}, {h.name("basePriceMinor"), r.BasePriceMinor.Set, r.BasePriceMinor.Null},
		{"visible", r.Visible.Set, r.Visible.Null}, {"showInKitchen", r.ShowInKitchen.Set, r.ShowInKitchen.Null}} {
		if f.set && f.null {
			return ch, httpx.BadRequest("changes.%s cannot be null.", f.name)
		}
	}
	if r.Name.Set {
		ch.Name = &r.Name.Value
	}
	if r.BasePriceMinor.Set {
		ch.BasePriceMinor = &r.BasePriceMinor.Value
	}
	if r.Description.Set {
		ch.DescriptionSet = true
		if !r.Description.Null {
			ch.Description = &r.Description.Value
		}
	}
	if r.Visible.Set {
		ch.Visible = &r.Visible.Value
	}
	if r.ShowInKitchen.Set {
		ch.ShowInKitchen = &r.ShowInKitchen.Value
	}
	return ch, ch.Check()
}

// setMenuFields are the fields both set-menu bodies share.
type setMenuFields struct {
	writeCommon
	MenuID                optional[string] `json:"menuId"`
	ExpectedCategoryCount optional[int]    `json:"expectedCategoryCount"`
	ExpectedItemCount     optional[int]    `json:"expectedItemCount"`
}

type setPosRequest struct {
	setMenuFields
	ExpectedCurrentPosMenuID optional[string] `json:"expectedCurrentPosMenuId"`
}

type setOnlineRequest struct {
	setMenuFields
	ExpectedCurrentOnlineMenuID optional[string] `json:"expectedCurrentOnlineMenuId"`
}

type setPosView struct {
	ActionID          string                `json:"actionId"`
	RestaurantID      string                `json:"restaurantId"`
	Menu              contracts.MenuSummary `json:"menu"`
	PreviousPosMenuID *string               `json:"previousPosMenuId"`
	Replayed          bool                  `json:"replayed"`
}

type setOnlineView struct {
	ActionID             string                `json:"actionId"`
	RestaurantID         string                `json:"restaurantId"`
	Menu                 contracts.MenuSummary `json:"menu"`
	PreviousOnlineMenuID *string               `json:"previousOnlineMenuId"`
	Replayed             bool                  `json:"replayed"`
}

func (h *Handlers) setMenu(p domain.Publication) fiber.Handler {
	currentField, operation := p.ExpectedCurrentField(), "setPosMenu"
	if p == domain.Online {
		operation = "setOnlineMenu"
	}
	return func(c *fiber.Ctx) error {
		t, err := tenantOf(c)
		if err != nil {
			return err
		}
		var (
			f       setMenuFields
			current optional[string]
			body    json.RawMessage
		)
		if p == domain.POS {
			var req setPosRequest
			body, err = h.decode(c, &req)
			f, current = req.setMenuFields, req.ExpectedCurrentPosMenuID
		} else {
			var req setOnlineRequest
			body, err = h.decode(c, &req)
			f, current = req.setMenuFields, req.ExpectedCurrentOnlineMenuID
		}
		if err != nil {
			return err
		}
		if err := f.check(true); err != nil {
			return err
		}
		if !f.MenuID.Set || f.MenuID.Null || !f.ExpectedCategoryCount.Set || f.ExpectedCategoryCount.Null ||
			!f.ExpectedItemCount.Set || f.ExpectedItemCount.Null || !current.Set {
			return httpx.BadRequest("%s, expectedCategoryCount, expectedItemCount and %s (a uuid or null) are required.", h.name("menuId"), h.name(currentField))
		}
		s := domain.SetMenu{Publication: p, MenuID: strings.ToLower(f.MenuID.Value),
			ExpectedCategoryCount: f.ExpectedCategoryCount.Value, ExpectedItemCount: f.ExpectedItemCount.Value}
		if !current.Null {
			v := strings.ToLower(current.Value)
			s.ExpectedCurrent = &v
		}
		if err := s.Check(); err != nil {
			return err
		}
		key := writeKey(t, operation, f.IdempotencyKey.Value, nil, body)
		return h.write(c, key, func(tx domain.Tx) (domain.Outcome, any, error) {
			m, previous, err := domain.Publish(tx, t.id, s)
			if err != nil {
				return 0, nil, err
			}
			if p == domain.POS {
				return domain.Changed, setPosView{ActionID: domain.NewID(), RestaurantID: t.id, Menu: domain.Summary(m), PreviousPosMenuID: previous}, nil
			}
			return domain.Changed, setOnlineView{ActionID: domain.NewID(), RestaurantID: t.id, Menu: domain.Summary(m), PreviousOnlineMenuID: previous}, nil
		})
	}
}
