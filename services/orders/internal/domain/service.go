package domain

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Ingestion reads NDJSON order records and stores them in batches.
type Ingestion struct {
	Repo Repository
	// BatchSize is how many orders one transaction stores (import); 0 stores
	// the whole stream in one transaction (the HTTP ingestion endpoint).
	BatchSize int
	// Sink, when set with a BatchSize, takes the batches instead of
	// Repo.Replace (a bulk load into an empty schema).
	Sink BatchSink
	// Events decides the event of each order a batch changes; nil records
	// none.
	Events Decide
}

// BatchSink takes an import's batches: Prepare runs on the parsing workers,
// concurrently (encode the batch there); Store runs in input order.
type BatchSink interface {
	Prepare(orders []Order) (any, error)
	Store(ctx context.Context, prepared any) error
}

// Ingest validates every record and stores them. With BatchSize 0 nothing is
// stored unless every line is valid; a later record of the same order id
// replaces an earlier one. With a BatchSize, batches are parsed in parallel
// and stored one after another in input order; an error stops at the first
// bad batch (earlier batches stay stored).
func (in Ingestion) Ingest(ctx context.Context, r io.Reader, progress func(stored int)) (int, error) {
	if in.BatchSize <= 0 {
		var batch []Order
		if err := ParseRecords(r, func(_ int, o Order) error {
			batch = append(batch, o)
			return nil
		}); err != nil {
			return 0, err
		}
		if len(batch) == 0 {
			return 0, nil
		}
		if err := in.Repo.Replace(ctx, dedupe(batch), in.Events); err != nil {
			return 0, err
		}
		if progress != nil {
			progress(len(batch))
		}
		return len(batch), nil
	}
	return in.pipeline(ctx, r, progress)
}

type chunk struct {
	firstLine int
	raw       []string
	orders    []Order
	prepared  any // by Sink.Prepare
	err       error
	parsed    chan struct{}
}

func (in Ingestion) pipeline(ctx context.Context, r io.Reader, progress func(stored int)) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := max(1, runtime.GOMAXPROCS(0))
	// A few chunks in flight keep every stage busy; each holds BatchSize
	// lines, their orders and (bulk load) their encoded rows.
	chunks := make(chan *chunk, workers+1) // in input order, to the writer
	work := make(chan *chunk, workers)     // to the parsers
	var readErr error
	go func() {
		defer close(chunks)
		defer close(work)
		br := bufio.NewReaderSize(r, 4<<20)
		line := 0
		// A chunk's lines are read into one string (no allocation per line;
		// the records' strings share it).
		var data strings.Builder
		var ends []int
		c := &chunk{firstLine: 1, parsed: make(chan struct{})}
		send := func() bool {
			text := data.String()
			c.raw = make([]string, len(ends))
			start := 0
			for i, end := range ends {
				c.raw[i] = text[start:end]
				start = end
			}
			select {
			case chunks <- c:
			case <-ctx.Done():
				return false
			}
			work <- c
			c = &chunk{firstLine: line + 1, parsed: make(chan struct{})}
			size := data.Len()
			data = strings.Builder{}
			data.Grow(size + size/8)
			ends = ends[:0]
			return true
		}
		for {
			var err error
			for {
				var frag []byte
				frag, err = br.ReadSlice('\n')
				data.Write(frag)
				if !errors.Is(err, bufio.ErrBufferFull) {
					break
				}
			}
			line++
			ends = append(ends, data.Len())
			if len(ends) >= in.BatchSize {
				if !send() {
					return
				}
			}
			if errors.Is(err, io.EOF) {
				if len(ends) > 0 {
					send()
				}
				return
			}
			if err != nil {
				readErr = err
				cancel()
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			locs := map[string]*time.Location{}
			var dec fastDecoder
			for c := range work {
				c.orders = make([]Order, 0, len(c.raw))
				for i, raw := range c.raw {
					if len(strings.TrimSpace(raw)) == 0 {
						continue
					}
					o, err := parseRecord(raw, locs, &dec)
					if err != nil {
						n := c.firstLine + i
						var inv *InvalidError
						if errors.As(err, &inv) {
							err = &InvalidError{Field: fmt.Sprintf("line %d: %s", n, inv.Field), Message: fmt.Sprintf("line %d: %s", n, inv.Message)}
						}
						c.err = err
						break
					}
					c.orders = append(c.orders, o)
				}
				if in.Sink != nil && c.err == nil && len(c.orders) > 0 {
					c.prepared, c.err = in.Sink.Prepare(dedupe(c.orders))
				}
				c.raw = nil
				close(c.parsed)
			}
		}()
	}
	stored := 0
	var err error
	for c := range chunks {
		if err != nil {
			continue // drain
		}
		select {
		case <-c.parsed:
		case <-ctx.Done():
			err = ctx.Err()
			continue
		}
		if c.err != nil {
			err = c.err
			cancel()
			continue
		}
		if len(c.orders) == 0 {
			continue
		}
		if in.Sink != nil {
			err = in.Sink.Store(ctx, c.prepared)
		} else {
			err = in.Repo.Replace(ctx, dedupe(c.orders), in.Events)
		}
		if err != nil {
			cancel()
			continue
		}
		stored += len(c.orders)
		if progress != nil {
			progress(stored)
		}
	}
	wg.Wait()
	if err == nil && readErr != nil {
		err = readErr
	}
	return stored, err
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
