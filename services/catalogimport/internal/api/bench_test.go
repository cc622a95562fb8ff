package api_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/catalogimport/internal/fixture"
)

// BenchmarkApplyFullLimitDocument applies a document at every limit into a
// new draft, through the real menus service: the plan again, one batch of
// 481 entities written in one transaction, and the record with its key.
func BenchmarkApplyFullLimitDocument(b *testing.B) {
	e := newEnv(b, options{})
	doc := fixture.Full(domain.ContractLimits)
	hash := e.plan(newDraft, doc).PlanHash
	for b.Loop() {
		if status, raw := e.apply(newDraft, doc, hash, uuid.NewString()); status != http.StatusCreated {
			b.Fatalf("%d %s", status, raw)
		}
	}
}
