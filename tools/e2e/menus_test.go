package e2e

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"partnerapi.dev/tools/partnerclient"
	"partnerapi.dev/tools/seed"
)

// menuCalls walks a menu manager's day through the gateway and the menus
// service with the seeded catalog: list, read the POS menu (every line of
// a real order resolves in it), create a draft, add items, inspect and edit
// a draft item, publish the draft for POS and online ordering.
func menuCalls(t *testing.T, c *partnerclient.ClientWithResponses, rid uuid.UUID, order partnerclient.OrderDetails) {
	t.Helper()
	ctx := context.Background()
	g := seed.Generator{Seed: 42}
	main := uuid.MustParse(g.ID("menu/" + rid.String() + "/main"))
	draft := uuid.MustParse(g.ID("menu/" + rid.String() + "/draft"))
	special := uuid.MustParse(g.ID("catalog-item/" + rid.String() + "/Seasonal Special"))

	listed, err := c.ListMenusWithResponse(ctx, rid, nil)
	if err != nil || listed.JSON200 == nil || listed.JSON200.Data.PosMenuId == nil || *listed.JSON200.Data.PosMenuId != main ||
		listed.JSON200.Data.OnlineMenuId == nil || *listed.JSON200.Data.OnlineMenuId != main || len(listed.JSON200.Data.Menus) < 3 {
		t.Fatalf("listMenus: %v %d %s", err, status(listed), listed.Body)
	}

	limit := 500
	page, err := c.ListMenuItemsWithResponse(ctx, rid, main, &partnerclient.ListMenuItemsParams{Limit: &limit})
	if err != nil || page.JSON200 == nil || len(page.JSON200.Data.Items) == 0 || page.JSON200.Data.NextAfter != nil {
		t.Fatalf("listMenuItems: %v %d %s", err, status(page), page.Body)
	}
	onMain := map[string]string{}
	for _, it := range page.JSON200.Data.Items {
		onMain[it.CatalogItemId.String()] = it.CategoryId.String()
	}
	for _, l := range order.Items {
		if l.CatalogItemId == nil || l.MenuId == nil || *l.MenuId != main.String() || l.CatalogCategoryId == nil || onMain[*l.CatalogItemId] != *l.CatalogCategoryId {
			t.Fatalf("order line %s (%s) does not resolve in the POS menu", l.LineId, l.Name)
		}
	}

	created, err := c.CreateMenuWithResponse(ctx, rid, nil, partnerclient.CreateMenuJSONRequestBody{Name: "Weekend brunch", IdempotencyKey: uuid.New()})
	if err != nil || created.JSON201 == nil || created.JSON201.Data.Menu.ItemCount != 0 || created.JSON201.Data.Menu.IsPosMenu {
		t.Fatalf("createMenu: %v %d %s", err, status(created), created.Body)
	}
	brunch := created.JSON201.Data.Menu.MenuId
	picked := []uuid.UUID{page.JSON200.Data.Items[0].CatalogItemId, page.JSON200.Data.Items[1].CatalogItemId}
	added, err := c.AddMenuItemsWithResponse(ctx, rid, brunch, nil, partnerclient.AddMenuItemsJSONRequestBody{CatalogItemIds: picked,
		ExpectedCategoryCount: 0, ExpectedItemCount: 0, IdempotencyKey: uuid.New(), Confirmed: partnerclient.AddMenuItemsJSONBodyConfirmedTrue})
	if err != nil || added.JSON200 == nil || added.JSON200.Data.Menu.ItemCount != 2 || len(added.JSON200.Data.AddedCatalogItemIds) != 2 {
		t.Fatalf("addMenuItems: %v %d %s", err, status(added), added.Body)
	}
	brunchMenu := added.JSON200.Data.Menu

	target, err := c.GetDraftMenuItemWithResponse(ctx, rid, draft, special, nil)
	if err != nil || target.JSON200 == nil || !target.JSON200.Data.CanEdit || target.JSON200.Data.SharedMenuCount != 0 {
		t.Fatalf("getDraftMenuItem: %v %d %s", err, status(target), target.Body)
	}
	shared, err := c.GetDraftMenuItemWithResponse(ctx, rid, brunch, picked[0], nil)
	if err != nil || shared.JSON200 == nil || shared.JSON200.Data.CanEdit || shared.JSON200.Data.SharedMenuCount < 1 {
		t.Fatalf("getDraftMenuItem of a shared item: %v %d %s", err, status(shared), shared.Body)
	}
	body := partnerclient.UpdateDraftMenuItemJSONRequestBody{ExpectedVersion: target.JSON200.Data.Version, IdempotencyKey: uuid.New(),
		Confirmed: partnerclient.UpdateDraftMenuItemJSONBodyConfirmedTrue}
	name, price := "Seasonal Chanterelle Soup", 1850
	body.Changes.Name, body.Changes.BasePriceMinor = &name, &price
	edited, err := c.UpdateDraftMenuItemWithResponse(ctx, rid, draft, special, nil, body)
	if err != nil || edited.JSON200 == nil || edited.JSON200.Data.Item.Name != name || edited.JSON200.Data.Version == target.JSON200.Data.Version {
		t.Fatalf("updateDraftMenuItem: %v %d %s", err, status(edited), edited.Body)
	}
	stale, err := c.UpdateDraftMenuItemWithResponse(ctx, rid, draft, special, nil, partnerclient.UpdateDraftMenuItemJSONRequestBody{
		ExpectedVersion: target.JSON200.Data.Version, IdempotencyKey: uuid.New(), Changes: body.Changes, Confirmed: body.Confirmed})
	if err != nil || stale.JSON409 == nil || stale.JSON409.Error != "conflict" {
		t.Fatalf("updateDraftMenuItem at a stale version: %v %d %s", err, status(stale), stale.Body)
	}

	pos, err := c.SetPosMenuWithResponse(ctx, rid, nil, partnerclient.SetPosMenuJSONRequestBody{MenuId: brunch,
		ExpectedCategoryCount: brunchMenu.CategoryCount, ExpectedItemCount: brunchMenu.ItemCount, ExpectedCurrentPosMenuId: &main,
		IdempotencyKey: uuid.New(), Confirmed: partnerclient.SetPosMenuJSONBodyConfirmedTrue})
	if err != nil || pos.JSON200 == nil || pos.JSON200.Data.PreviousPosMenuId == nil || *pos.JSON200.Data.PreviousPosMenuId != main || !pos.JSON200.Data.Menu.IsPosMenu {
		t.Fatalf("setPosMenu: %v %d %s", err, status(pos), pos.Body)
	}
	online, err := c.SetOnlineMenuWithResponse(ctx, rid, nil, partnerclient.SetOnlineMenuJSONRequestBody{MenuId: brunch,
		ExpectedCategoryCount: brunchMenu.CategoryCount, ExpectedItemCount: brunchMenu.ItemCount, ExpectedCurrentOnlineMenuId: &main,
		IdempotencyKey: uuid.New(), Confirmed: partnerclient.SetOnlineMenuJSONBodyConfirmedTrue})
	if err != nil || online.JSON200 == nil || online.JSON200.Data.PreviousOnlineMenuId == nil || *online.JSON200.Data.PreviousOnlineMenuId != main {
		t.Fatalf("setOnlineMenu: %v %d %s", err, status(online), online.Body)
	}
	after, err := c.ListMenusWithResponse(ctx, rid, nil)
	if err != nil || after.JSON200 == nil || *after.JSON200.Data.PosMenuId != brunch || *after.JSON200.Data.OnlineMenuId != brunch {
		t.Fatalf("listMenus after publishing: %v %d %s", err, status(after), after.Body)
	}
}
