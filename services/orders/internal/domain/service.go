package domain

import (
	"context"
	"io"
)

// Ingestion reads NDJSON order records and stores them in batches.
type Ingestion struct {
	Repo Repository
	// BatchSize is how many orders one transaction stores (import); 0 stores
	// the whole stream in one transaction (the HTTP ingestion endpoint).
	BatchSize int
}

// Ingest validates every record and stores them. With BatchSize 0 nothing is
// stored unless every line is valid; a later record of the same order id
// replaces an earlier one.
func (in Ingestion) Ingest(ctx context.Context, r io.Reader, progress func(stored int)) (int, error) {
	var batch []Order
	stored := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := in.Repo.Replace(ctx, dedupe(batch)); err != nil {
			return err
		}
		stored += len(batch)
		batch = batch[:0]
		if progress != nil {
			progress(stored)
		}
		return nil
	}
	err := ParseRecords(r, func(_ int, o Order) error {
		batch = append(batch, o)
		if in.BatchSize > 0 && len(batch) >= in.BatchSize {
			return flush()
		}
		return nil
	})
	if err != nil {
		return stored, err
	}
	return stored, flush()
}

// dedupe keeps the last state of each order.
func dedupe(orders []Order) []Order {
	type key struct{ r, o string }
	last := make(map[key]int, len(orders))
	for i, o := range orders {
		last[key{o.RestaurantID, o.OrderID}] = i
	}
	if len(last) == len(orders) {
		return orders
	}
	out := make([]Order, 0, len(last))
	for i, o := range orders {
		if last[key{o.RestaurantID, o.OrderID}] == i {
			out = append(out, o)
		}
	}
	return out
}
