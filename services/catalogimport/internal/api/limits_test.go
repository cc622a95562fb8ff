package api_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/catalogimport/internal/fixture"
)

// A document at every limit plans valid and the menus service writes all of it.
func TestApplyAFullLimitDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	doc := fixture.Full(domain.ContractLimits)
	p := e.plan(newDraft, doc)
	if !p.Valid {
		t.Fatalf("plan: %+v", p.Errors)
	}
	status, raw := e.apply(newDraft, doc, p.PlanHash, uuid.NewString())
	if status != http.StatusCreated {
		t.Fatalf("%d %s", status, raw)
	}
	if created := data[applied](t, raw).Created; created != p.Creates {
		t.Fatalf("created %+v, planned %+v", created, p.Creates)
	}
	if n := e.count(`SELECT count(*) FROM menus.combo_components`); n != 100 {
		t.Fatalf("%d combo components", n)
	}
}
