package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"

	"github.com/gofiber/fiber/v2"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/pkg/internalctx"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/services/menus/internal/domain"
)

// catalogTenant admits a catalog import call: the partner's signed context,
// forwarded unchanged, must grant catalog import for the path's restaurant.
func catalogTenant(c *fiber.Ctx) (tenant, error) {
	t, err := tenantOf(c)
	if err != nil {
		return t, err
	}
	if !internalctx.From(c).HasScope(contracts.ScopeCatalogImport) {
		return tenant{}, httpx.NotFound()
	}
	return t, nil
}

func (h *Handlers) catalogTarget(c *fiber.Ctx) error {
	t, err := catalogTenant(c)
	if err != nil {
		return err
	}
	menuID := strings.ToLower(c.Params("menuId"))
	if !domain.IsUUID(menuID) {
		return httpx.NotFound()
	}
	ct, err := h.Repo.CatalogTarget(c.UserContext(), t.id, menuID)
	if err != nil {
		return err
	}
	out := contracts.CatalogTarget{Menu: domain.Summary(ct.Menu), Revision: ct.Menu.RevisionString(),
		InactiveDraft: ct.Menu.InactiveDraft(), Categories: make([]contracts.CatalogTargetCategory, len(ct.Categories))}
	for i, cat := range ct.Categories {
		out.Categories[i] = contracts.CatalogTargetCategory{CategoryID: cat.ID, Name: cat.Name, ItemCount: cat.ItemCount}
	}
	return httpx.Data(c, out)
}

func (h *Handlers) catalogBatch(c *fiber.Ctx) error {
	t, err := catalogTenant(c)
	if err != nil {
		return err
	}
	var b contracts.CatalogBatch
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	if err := domain.CheckBatch(b); err != nil {
		return err
	}
	if b.Target.MenuID != nil {
		lower := strings.ToLower(*b.Target.MenuID)
		b.Target.MenuID = &lower
	}
	// The batch id is the batch's idempotency key, per restaurant.
	key := domain.WriteKey{Scope: "catalog-batch/" + t.id, Key: strings.ToLower(b.BatchID), Body: b}
	ans, err := h.Repo.Write(c.UserContext(), key, func(tx domain.Tx) (domain.Outcome, any, error) {
		return domain.ApplyBatch(tx, t.id, b)
	})
	if err != nil {
		return err
	}
	c.Status(statusOf(ans.Outcome)).Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(append(append([]byte(`{"data":`), ans.Data...), '}'))
}

type ingestResult struct {
	Restaurants int `json:"restaurants"`
}

// ingest loads NDJSON catalogs (one restaurant a line) from the POS side.
func (h *Handlers) ingest(c *fiber.Ctx) error {
	if err := httpx.RequireBearer(c, h.IngestToken, "ingestion token"); err != nil {
		return err
	}
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		return httpx.BadRequest("The body is empty; send NDJSON, one restaurant's catalog per line.")
	}
	// Every line is read and checked before anything is stored.
	var catalogs []domain.Snapshot
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 1<<20), IngestBodyLimit)
	for line := 1; sc.Scan(); line++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var snap contracts.MenuCatalog
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&snap); err != nil {
			return httpx.BadRequest("line %d: %s", line, err.Error())
		}
		if err := domain.CheckSnapshot(snap); err != nil {
			return httpx.BadRequest("line %d: %s", line, err.Error())
		}
		catalogs = append(catalogs, snap)
	}
	if err := sc.Err(); err != nil {
		return httpx.BadRequest("The body could not be read as NDJSON: %s", err.Error())
	}
	// An ingested batch is a bulk load: its statements may outlast a
	// partner request's bound (DATABASE_STATEMENT_TIMEOUT).
	if err := h.Repo.Ingest(database.Unbounded(c.UserContext()), catalogs); err != nil {
		return err
	}
	n := len(catalogs)
	return httpx.Data(c, ingestResult{Restaurants: n})
}
