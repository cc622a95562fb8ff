package domain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

type memRepo struct {
	mu      sync.Mutex
	batches [][]Order
}

func (m *memRepo) Replace(_ context.Context, orders []Order, _ Decide) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.batches = append(m.batches, orders)
	return nil
}
func (m *memRepo) Search(context.Context, Filter) (Page, error)       { return Page{}, nil }
func (m *memRepo) Get(context.Context, string, string) (Order, error) { return Order{}, ErrNotFound }

func record(id string, total int) string {
	return fmt.Sprintf(`{"restaurantId":"0b5a3c1e-8f51-4a0e-9b8e-1c1f0e6d2a01","timeZone":"Europe/Helsinki","dayStartHour":4,`+
		`"currency":"EUR","country":"FI","orderId":%q,"restaurantOrderNumber":1,"receiptHash":"r","occurredAt":"2026-03-10T01:30:00Z",`+
		`"orderType":"dine_in","tableNumber":1,"status":"paid","paymentMethod":"manual","orderOrigin":{"kind":"marketplace","provider":"wolt"},`+
		`"totalAmountMinor":%d,"taxCountryCode":"FI","taxRatesAsOf":"2026-01-01","lines":[{"lineId":"l","name":"Soup","quantity":1,"taxEvidence":"snapshot"}]}`, id, total)
}

func TestIngestBatchesInOrder(t *testing.T) {
	var lines []string
	for i := range 95 {
		lines = append(lines, record(fmt.Sprintf("o%d", i%90), i))
	}
	repo := &memRepo{}
	n, err := Ingestion{Repo: repo, BatchSize: 10}.Ingest(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n\n"), nil)
	if err != nil || n != 95 {
		t.Fatalf("stored %d: %v", n, err)
	}
	if len(repo.batches) != 10 {
		t.Fatalf("%d batches", len(repo.batches))
	}
	last := repo.batches[9]
	if o := last[len(last)-1]; o.OrderID != "o4" || o.TotalAmountMinor != 94 {
		t.Fatalf("batches out of order: %+v", o.OrderID)
	}
	o := repo.batches[0][0]
	if o.PaymentMethod != "wolt" || o.RecordedPaymentMethod != "manual" || o.BusinessDate.String() != "2026-03-09" || o.LocalMinute != 210 {
		t.Fatalf("derived fields: %+v", o)
	}
}

func TestIngestNamesTheBadLine(t *testing.T) {
	for _, batch := range []int{0, 3} {
		lines := []string{record("a", 1), record("b", 2), record("c", 3), record("d", 4), strings.Replace(record("e", 5), `"paid"`, `"open"`, 1), record("f", 6)}
		repo := &memRepo{}
		_, err := Ingestion{Repo: repo, BatchSize: batch}.Ingest(context.Background(), strings.NewReader(strings.Join(lines, "\n")), nil)
		var inv *InvalidError
		if !errors.As(err, &inv) || !strings.Contains(inv.Message, "line 5") || !strings.Contains(inv.Field, "status") {
			t.Fatalf("batch %d: %v", batch, err)
		}
		if batch == 0 && len(repo.batches) != 0 {
			t.Fatal("a bad stream stored something")
		}
	}
}
