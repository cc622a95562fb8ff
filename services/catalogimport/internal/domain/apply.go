package domain

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/services/contracts"
)

// Importer plans and applies catalog imports.
type Importer struct {
	Settings Settings
	Menus    Menus
	Imports  Repository
}

// ApplyRequest is the apply body.
type ApplyRequest struct {
	Target           Target                    `json:"target"`
	Document         contracts.CatalogDocument `json:"document"`
	ExpectedPlanHash string                    `json:"expectedPlanHash"`
	IdempotencyKey   string                    `json:"idempotencyKey"`
	Confirmed        *bool                     `json:"confirmed"`
}

// Caller is who applies: the partner client and the user who authorized it.
type Caller struct {
	ClientID string
	UserID   string
}

var planHashPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// batchNamespace derives batch ids (UUIDv5) from apply requests.
var batchNamespace = uuid.MustParse("6f1c1e52-3f0a-4b8e-9a57-2c7d4e0b9a11")

// BatchID is the menus batch id of an apply: the same for the same client,
// restaurant and idempotency key, so a retry after a lost answer is a replay
// in the menus service too, never a second write.
func BatchID(clientID, restaurantID, idempotencyKey string) string {
	return uuid.NewSHA1(batchNamespace, []byte(clientID+"\n"+strings.ToLower(restaurantID)+"\n"+strings.ToLower(idempotencyKey))).String()
}

// Apply writes the planned document once per idempotency key: it recomputes
// the plan (a changed draft or document is a conflict, an invalid plan a 400
// listing the errors) and sends one batch to the menus service.
func (im *Importer) Apply(ctx context.Context, who Caller, restaurantID string, req ApplyRequest) (Stored, error) {
	if err := CheckTarget(req.Target); err != nil {
		return Stored{}, err
	}
	switch {
	case req.Confirmed == nil || !*req.Confirmed:
		return Stored{}, invalid("confirmed must be true: apply only a plan you reviewed.")
	case !idempotency.ValidKey(req.IdempotencyKey):
		return Stored{}, invalid("idempotencyKey must be a uuid.")
	case !planHashPattern.MatchString(req.ExpectedPlanHash):
		return Stored{}, invalid("expectedPlanHash must be the planHash of the plan, unchanged (64 lower-case hex characters).")
	}
	req.Document = Normalize(req.Document)
	idemKey, _ := idempotency.NormalizeKey(req.IdempotencyKey)
	key := ApplyKey{
		Scope:        who.ClientID + "/" + strings.ToLower(restaurantID) + "/catalog-import-apply",
		Key:          idemKey,
		Body:         req,
		ClientID:     who.ClientID,
		UserID:       who.UserID,
		RestaurantID: strings.ToLower(restaurantID),
		BatchID:      BatchID(who.ClientID, restaurantID, idemKey),
	}
	return im.Imports.Apply(ctx, key, func(ctx context.Context) (AppliedImport, error) {
		batch, err := im.Imports.PendingBatch(ctx, key)
		if err != nil {
			return AppliedImport{}, err
		}
		if batch == nil {
			b, err := im.plannedBatch(ctx, key, req)
			if err != nil {
				return AppliedImport{}, err
			}
			if err := im.Imports.SavePending(ctx, key, b); err != nil {
				return AppliedImport{}, err
			}
			batch = &b
		}
		// From here the outcome may be unknown: only a refusal from the menus
		// service (it wrote nothing) forgets the pending batch.
		res, err := im.Menus.WriteBatch(ctx, restaurantID, *batch)
		if err != nil {
			if k, _ := fault.Of(err); k == fault.Invalid || k == fault.Conflict || k == fault.NotFound {
				if derr := im.Imports.DropPending(ctx, key.BatchID); derr != nil {
					return AppliedImport{}, errors.Join(err, derr)
				}
			}
			return AppliedImport{}, err
		}
		return appliedImport(key, req, *batch, res), nil
	})
}

// plannedBatch recomputes the plan and turns it into the batch to send.
func (im *Importer) plannedBatch(ctx context.Context, key ApplyKey, req ApplyRequest) (contracts.CatalogBatch, error) {
	plan, err := im.Plan(ctx, key.RestaurantID, PlanRequest{Target: req.Target, Document: req.Document})
	if err != nil {
		return contracts.CatalogBatch{}, err
	}
	switch {
	case !plan.TargetIsDraft:
		return contracts.CatalogBatch{}, conflict("The target menu is no longer an inactive draft (it is the POS or online menu); nothing was written. Plan into another draft.")
	case plan.Hash != req.ExpectedPlanHash:
		return contracts.CatalogBatch{}, conflict("The plan changed since it was reviewed (the document, target or target draft differs); nothing was written. Plan again and apply the new planHash.")
	case !plan.Valid:
		return contracts.CatalogBatch{}, invalid("The plan has errors; nothing was written. " + Summary(plan.Errors))
	}
	b := contracts.CatalogBatch{BatchID: key.BatchID, Target: contracts.CatalogBatchTarget{Mode: req.Target.Mode}, Document: req.Document}
	if req.Target.Mode == contracts.CatalogTargetExistingDraft {
		id, rev := strings.ToLower(req.Target.MenuID), plan.Revision
		b.Target.MenuID, b.Target.ExpectedRevision = &id, &rev
	}
	return b, nil
}

// idKinds are the keys of an answer's ids, each present even when empty.
var idKinds = []string{"menu", "menuCategories", "existingMenuCategories", "menuItems", "optionGroups", "options", "productCategories", "products", "combos"}

func appliedImport(key ApplyKey, req ApplyRequest, b contracts.CatalogBatch, res contracts.CatalogBatchResult) AppliedImport {
	ids := map[string]map[string]string{}
	for _, k := range idKinds {
		ids[k] = map[string]string{}
		for ref, id := range res.IDs[k] {
			ids[k][ref] = id
		}
	}
	outcome := Changed
	if b.Target.Mode == contracts.CatalogTargetNewDraft {
		outcome = Created
	}
	return AppliedImport{
		Applied: Applied{
			ActionID: key.BatchID, RestaurantID: key.RestaurantID, Menu: res.Menu,
			Created: res.Created, IDs: ids,
		},
		Outcome:  outcome,
		PlanHash: req.ExpectedPlanHash,
		Mode:     b.Target.Mode,
		Batch:    b,
		Event: Event{Type: contracts.EventCatalogImportApplied, RestaurantID: key.RestaurantID,
			Data: ImportEvent{ActionID: key.BatchID, TargetMode: b.Target.Mode, Menu: res.Menu, Created: res.Created}},
	}
}
