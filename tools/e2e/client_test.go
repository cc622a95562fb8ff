package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/services/contracts"
	"partnerapi.dev/tools/partnerclient"
	"partnerapi.dev/tools/seed"
	"partnerapi.dev/tools/system"
)

// generatedClientCalls calls every area of the API through the client
// oapi-codegen generates from the served document (tools/partnerclient):
// what the running system answers must decode into the documented types.
// Areas this deployment does not run answer their documented 503.
func generatedClientCalls(t *testing.T, sys *system.Stack, restaurant string) {
	ctx := context.Background()
	partnerctl := partnerctlBinary(t)
	c := client(t, sys, allScopesToken(t, partnerctl, sys, seed.OwnerEmail))
	// Organizations need an organization-boundary authorization: the
	// demo administrator's, of one organization.
	nordic := seed.Generator{Seed: 42}.ID("organization/nordic-table")
	admin := client(t, sys, allScopesToken(t, partnerctl, sys, seed.AdminEmail, "--organization", nordic))
	rid := uuid.MustParse(restaurant)

	doc, err := c.GetOpenAPIDocumentWithResponse(ctx)
	if err != nil || doc.StatusCode() != 200 || !bytes.Equal(doc.Body, apispec.JSON()) {
		t.Fatalf("the served document is not the one the client was generated from: %v %d", err, status(doc))
	}

	restaurants, err := c.ListRestaurantsWithResponse(ctx)
	if err != nil || restaurants.JSON200 == nil || len(restaurants.JSON200.Data) != 1 || restaurants.JSON200.Data[0].RestaurantId != rid {
		t.Fatalf("listRestaurants: %v %d %s", err, status(restaurants), string(restaurants.Body))
	}
	orgs, err := admin.ListOrganizationsWithResponse(ctx)
	if err != nil || orgs.JSON200 == nil || len(orgs.JSON200.Data.Organizations) != 1 || orgs.JSON200.Data.Organizations[0].OrganizationId.String() != nordic {
		t.Fatalf("listOrganizations: %v %d %s", err, status(orgs), string(orgs.Body))
	}

	limit := 3
	page, err := c.SearchOrdersWithResponse(ctx, rid, &partnerclient.SearchOrdersParams{Limit: &limit})
	if err != nil || page.JSON200 == nil || len(page.JSON200.Data.Matches) != 3 || page.JSON200.Data.NextCursor == nil {
		t.Fatalf("searchOrders: %v %d %s", err, status(page), string(page.Body))
	}
	next, err := c.SearchOrdersWithResponse(ctx, rid, &partnerclient.SearchOrdersParams{Limit: &limit, Cursor: page.JSON200.Data.NextCursor})
	if err != nil || next.JSON200 == nil || len(next.JSON200.Data.Matches) == 0 {
		t.Fatalf("searchOrders, next page: %v %d %s", err, status(next), string(next.Body))
	}
	id := page.JSON200.Data.Matches[0].OrderId
	order, err := c.GetOrderWithResponse(ctx, rid, id, nil)
	if err != nil || order.JSON200 == nil || order.JSON200.Data.Order.OrderId != id {
		t.Fatalf("getOrder: %v %d %s", err, status(order), string(order.Body))
	}
	missing, err := c.GetOrderWithResponse(ctx, rid, "no-such-order", nil)
	if err != nil || missing.JSON404 == nil || missing.JSON404.Error != "not_found" {
		t.Fatalf("getOrder of an unknown order: %v %d %s", err, status(missing), string(missing.Body))
	}

	menuCalls(t, c, rid, order.JSON200.Data.Order)
	accountingCalls(t, c, rid)
	capabilities, err := c.GetCatalogImportCapabilitiesWithResponse(ctx, rid, nil)
	if err != nil || capabilities.JSON200 == nil || !capabilities.JSON200.Data.CreateOnly || capabilities.JSON200.Data.Limits.MenuItems != 100 {
		t.Fatalf("getCatalogImportCapabilities: %v %d %s", err, status(capabilities), string(capabilities.Body))
	}
}

type response interface {
	StatusCode() int
}

func status(r response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode()
}

func client(t *testing.T, sys *system.Stack, token string) *partnerclient.ClientWithResponses {
	t.Helper()
	c, err := partnerclient.NewClientWithResponses(sys.Gateway, partnerclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// partnerctlBinary is partnerctl from the system's binaries.
func partnerctlBinary(t *testing.T) string {
	t.Helper()
	return filepath.Join(binaries(t), "partnerctl")
}

// allScopesToken gets, through the real OAuth flow (partnerctl), a token of a
// demo user asking for every scope, so every operation passes the scope check.
func allScopesToken(t *testing.T, partnerctl string, sys *system.Stack, email string, approve ...string) string {
	t.Helper()
	return scopedToken(t, partnerctl, sys, email, contracts.ScopeNames(), approve...)
}

// scopedToken is a token of a demo user asking for scopes.
func scopedToken(t *testing.T, partnerctl string, sys *system.Stack, email string, scopes []string, approve ...string) string {
	t.Helper()
	return tokenAt(t, partnerctl, sys.Gateway, email, scopes, approve...)
}

// tokenAt is scopedToken through the sign-in and consent pages at base.
func tokenAt(t *testing.T, partnerctl, base, email string, scopes []string, approve ...string) string {
	t.Helper()
	args := append([]string{"token", "--base-url", base, "--email", email, "--password", seed.DemoPassword,
		"--client-id", seed.DemoClientID, "--redirect-uri", seed.DemoRedirectURI, "--scope", strings.Join(scopes, " "), "--json"}, approve...)
	var stderr bytes.Buffer
	cmd := exec.Command(partnerctl, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("partnerctl token for %s: %v\n%s", email, err, stderr.Bytes())
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(out, &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("partnerctl token: %q", out)
	}
	return tok.AccessToken
}

// accountingCalls walks the accounting area over the seeded data: report,
// summary, refunds, workspace, then a correction previewed, applied,
// replayed and undone.
func accountingCalls(t *testing.T, c *partnerclient.ClientWithResponses, rid uuid.UUID) {
	ctx := context.Background()
	date := func(y int, m time.Month, d int) openapi_types.Date {
		return openapi_types.Date{Time: time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}
	}
	first, last := date(2026, 10, 1), date(2026, 10, 31)
	month, err := c.GetPaymentReportWithResponse(ctx, rid, &partnerclient.GetPaymentReportParams{StartDate: first, EndDate: last, Scope: partnerclient.GetPaymentReportParamsScopeMonth})
	if err != nil || month.JSON200 == nil || month.JSON200.Data.RawTotalMinor <= 0 || len(month.JSON200.Data.RawRows) == 0 {
		t.Fatalf("getPaymentReport: %v %d %s", err, status(month), month.Body)
	}
	var rows int
	for _, r := range month.JSON200.Data.RawRows {
		rows += r.GrossMinor
	}
	if rows != month.JSON200.Data.RawTotalMinor {
		t.Fatalf("raw total %d != rows %d", month.JSON200.Data.RawTotalMinor, rows)
	}
	summary, err := c.GetAccountingSummaryWithResponse(ctx, rid, &partnerclient.GetAccountingSummaryParams{StartDate: first, EndDate: last, Scope: partnerclient.GetAccountingSummaryParamsScopeMonth})
	if err != nil || summary.JSON200 == nil || summary.JSON200.Data.Sales.GrossMinor != month.JSON200.Data.RawTotalMinor {
		t.Fatalf("getAccountingSummary: %v %d %s", err, status(summary), summary.Body)
	}
	refunds, err := c.ListRefundsWithResponse(ctx, rid, &partnerclient.ListRefundsParams{StartDate: first, EndDate: last})
	if err != nil || refunds.JSON200 == nil || len(refunds.JSON200.Data.Events) == 0 {
		t.Fatalf("listRefunds: %v %d %s", err, status(refunds), refunds.Body)
	}
	ws, err := c.GetPaymentCorrectionWorkspaceWithResponse(ctx, rid, &partnerclient.GetPaymentCorrectionWorkspaceParams{StartDate: first, EndDate: last, Scope: partnerclient.GetPaymentCorrectionWorkspaceParamsScopeMonth})
	if err != nil || ws.JSON200 == nil || len(ws.JSON200.Data.Sources) == 0 || !ws.JSON200.Data.CanWrite {
		t.Fatalf("getPaymentCorrectionWorkspace: %v %d %s", err, status(ws), ws.Body)
	}
	var src *partnerclient.PaymentSource
	for i, s := range ws.JSON200.Data.Sources {
		if s.MethodKey == "card" {
			src = &ws.JSON200.Data.Sources[i]
			break
		}
	}
	if src == nil {
		t.Fatal("no card payment in the workspace")
	}
	cash := "cash"
	reason := "Paid in cash, keyed as card"
	preview, err := c.PreviewPaymentCorrectionWithResponse(ctx, rid, nil, partnerclient.CorrectionPreviewRequest{
		Action: partnerclient.CorrectionPreviewRequestActionCorrect, BusinessDate: src.BusinessDate, SourceKind: src.SourceKind,
		SourceRecordId: src.SourceRecordId, ToMethodKey: &cash, Reason: reason})
	if err != nil || preview.JSON200 == nil {
		t.Fatalf("previewPaymentCorrection: %v %d %s", err, status(preview), preview.Body)
	}
	pv := preview.JSON200.Data
	apply := partnerclient.CorrectionApplyRequest{Action: partnerclient.CorrectionApplyRequestActionCorrect, BusinessDate: src.BusinessDate,
		SourceKind: src.SourceKind, SourceRecordId: src.SourceRecordId, ToMethodKey: cash, Reason: reason,
		ExpectedRevisionId: pv.ExpectedRevisionId, PreviewFingerprint: pv.PreviewFingerprint, ExpiresAt: pv.ExpiresAt,
		Confirmed: partnerclient.CorrectionApplyRequestConfirmedTrue, IdempotencyKey: uuid.New()}
	applied, err := c.ApplyPaymentCorrectionWithResponse(ctx, rid, nil, apply)
	if err != nil || applied.JSON200 == nil || applied.JSON200.Data.Replayed || len(applied.JSON200.Data.Report.Corrections) == 0 {
		t.Fatalf("applyPaymentCorrection: %v %d %s", err, status(applied), applied.Body)
	}
	replay, err := c.ApplyPaymentCorrectionWithResponse(ctx, rid, nil, apply)
	if err != nil || replay.JSON200 == nil || !replay.JSON200.Data.Replayed || replay.JSON200.Data.BatchId != applied.JSON200.Data.BatchId {
		t.Fatalf("applyPaymentCorrection replayed: %v %d %s", err, status(replay), replay.Body)
	}
	undoPreview, err := c.PreviewPaymentCorrectionWithResponse(ctx, rid, nil, partnerclient.CorrectionPreviewRequest{
		Action: partnerclient.CorrectionPreviewRequestActionUndo, BusinessDate: src.BusinessDate, SourceKind: src.SourceKind,
		SourceRecordId: src.SourceRecordId, Reason: "Keyed correctly after all"})
	if err != nil || undoPreview.JSON200 == nil {
		t.Fatalf("preview undo: %v %d %s", err, status(undoPreview), undoPreview.Body)
	}
	up := undoPreview.JSON200.Data
	undone, err := c.UndoPaymentCorrectionWithResponse(ctx, rid, nil, partnerclient.CorrectionUndoRequest{Action: partnerclient.CorrectionUndoRequestActionUndo,
		BusinessDate: src.BusinessDate, SourceKind: src.SourceKind, SourceRecordId: src.SourceRecordId, Reason: "Keyed correctly after all",
		ExpectedRevisionId: up.ExpectedRevisionId, PreviewFingerprint: up.PreviewFingerprint, ExpiresAt: up.ExpiresAt,
		Confirmed: partnerclient.CorrectionUndoRequestConfirmedTrue, IdempotencyKey: uuid.New()})
	if err != nil || undone.JSON200 == nil || len(undone.JSON200.Data.Report.Corrections) != 2 || len(undone.JSON200.Data.Report.AppliedCorrectionIds) != 0 {
		t.Fatalf("undoPaymentCorrection: %v %d %s", err, status(undone), undone.Body)
	}
}
