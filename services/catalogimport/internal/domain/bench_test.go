package domain_test

import (
	"testing"

	"partnerapi.dev/services/catalogimport/internal/domain"
	"partnerapi.dev/services/catalogimport/internal/fixture"
)

// BenchmarkPlanFullLimitDocument plans a document at every limit (the
// largest a plan checks): every rule, the counts and the hash.
func BenchmarkPlanFullLimitDocument(b *testing.B) {
	doc := fixture.Full(domain.ContractLimits)
	req := domain.PlanRequest{Target: newDraft, Document: doc}
	b.ReportAllocs()
	for b.Loop() {
		if p := domain.Evaluate(settings, restaurant, req, nil); !p.Valid {
			b.Fatal(p.Errors)
		}
	}
}
