// Package store keeps orders in Postgres (schema "orders"): writes go through
// COPY into per-transaction staging tables and one set-based replace, reads
// are keyset-paginated queries shaped for the indexes in the migrations.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/outbox"
	"partnerapi.dev/services/orders/internal/domain"
)

// Store implements domain.Repository.
type Store struct {
	// DB is the primary: ingestion and everything it reads.
	DB *sql.DB
	// Reads, when set, serves search and details from a streaming replica
	// that has replayed every write committed before the read began.
	Reads *database.Reads
	// FreshLoad makes Replace COPY straight into the tables, skipping the
	// staging upsert; a batch that meets an existing order falls back to
	// the upsert. (The import command loads an empty schema with BulkLoad.)
	FreshLoad bool
	// observe, when set (by tests), sees every search query and its
	// arguments before it runs.
	observe func(q string, args []any)
}

var _ domain.Repository = (*Store)(nil)

var orderColumns = []string{
	"restaurant_id", "order_id", "restaurant_order_number", "receipt_hash", "occurred_at", "business_date",
	"local_minute", "order_type", "table_number", "status", "recorded_payment_method", "payment_method",
	"origin_kind", "origin_provider", "original_amount_minor", "total_amount_minor", "vat_minor",
	"refund_amount_minor", "discount_amount_minor", "gross_sales_minor", "net_sales_minor", "tip_amount_minor",
	"currency", "vat_allocation_method", "tax_country_code", "tax_rates_as_of", "line_count",
	"refunded_item_count", "payment_reference_count", "item_names", "item_keys",
}

// detailColumns are order_details' columns: an order's lines (with their
// options), VAT rows, refunded items and payment references as JSON text
// (see details.go).
var detailColumns = []string{"restaurant_id", "order_id", "lines", "vat_rows", "refunded_items", "payment_references"}

var itemKeyColumns = []string{"restaurant_id", "item_key", "occurred_at", "order_id"}

type stage struct {
	table, stage string
	cols         []string
	rows         [][]any
}

// Replace stores the orders' latest states in one transaction, with the
// events decide gives the orders it created or changed: a new order is
// domain.Created, one whose refund amount grew domain.RefundGrew and one
// that differs otherwise domain.Modified; an order stored again unchanged
// records nothing.
func (s *Store) Replace(ctx context.Context, orders []domain.Order, decide domain.Decide) error {
	if len(orders) == 0 {
		return nil
	}
	stages := newStages()
	names := map[[2]string]bool{}
	for _, o := range orders {
		appendRows(stages, o, names)
	}
	conn, err := s.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	err = replace(ctx, conn, stages, orders, decide, s.FreshLoad)
	if s.FreshLoad && database.IsConflict(err) {
		err = replace(ctx, conn, stages, orders, decide, false)
	}
	return err
}

func replace(ctx context.Context, conn *sql.Conn, stages []*stage, orders []domain.Order, decide domain.Decide, direct bool) error {
	return conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		return pgx.BeginFunc(ctx, pc, func(tx pgx.Tx) error {
			var changes []change
			if decide != nil && !direct {
				// Called by replaceTx once it holds the staged orders' row
				// locks, before it changes them: the orders it inserted
				// are created, the others compared with their stored state.
				return replaceTx(ctx, tx, stages, len(orders), direct, func(created []change) error {
					changed, err := classify(ctx, tx)
					changes = append(created, changed...)
					return err
				}, func() error { return record(ctx, tx, orders, changes, decide) })
			}
			if decide != nil {
				return replaceTx(ctx, tx, stages, len(orders), direct, nil, func() error {
					changes = make([]change, len(orders))
					for i, o := range orders {
						changes[i] = change{o.RestaurantID, o.OrderID, domain.Created}
					}
					return record(ctx, tx, orders, changes, decide)
				})
			}
			return replaceTx(ctx, tx, stages, len(orders), direct, nil, nil)
		})
	})
}

// change is what a replace does to one stored order.
type change struct {
	restaurantID, orderID string
	kind                  domain.Change
}

// classify compares the staged orders with the stored ones, which the
// replace has locked: refund grown, or otherwise different (any column of
// the order row, which carries the totals, counts and item names of its
// details). It is a statement of its own, run after the lock: under READ
// COMMITTED it then sees what a concurrent replace of the same orders
// committed. The orders this replace inserted equal their staged rows.
func classify(ctx context.Context, tx pgx.Tx) ([]change, error) {
	cols := orderColumns[2:]
	stored, staged := make([]string, len(cols)), make([]string, len(cols))
	for i, c := range cols {
		stored[i], staged[i] = "o."+c, "s."+c
	}
	rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT s.restaurant_id::text, s.order_id::text,
       CASE WHEN s.refund_amount_minor > o.refund_amount_minor THEN $1::int ELSE $2::int END
  FROM stage_orders s JOIN orders o ON o.restaurant_id = s.restaurant_id AND o.order_id = s.order_id
 WHERE (%s) IS DISTINCT FROM (%s)`, strings.Join(stored, ", "), strings.Join(staged, ", ")),
		int(domain.RefundGrew), int(domain.Modified))
	if err != nil {
		return nil, fmt.Errorf("compare orders: %w", err)
	}
	return collectChanges(rows)
}

// collectChanges reads (restaurant, order, change) rows.
func collectChanges(rows pgx.Rows) ([]change, error) {
	var out []change
	for rows.Next() {
		var c change
		var kind int32
		if err := rows.Scan(&c.restaurantID, &c.orderID, &kind); err != nil {
			return nil, err
		}
		c.kind = domain.Change(kind)
		out = append(out, c)
	}
	return out, rows.Err()
}

// record writes the events decide gives the changes, in input order, as
// the last step of the transaction.
func record(ctx context.Context, tx pgx.Tx, orders []domain.Order, changes []change, decide domain.Decide) error {
	if len(changes) == 0 {
		return nil
	}
	// Keys as Postgres prints them (the restaurant is a uuid).
	key := func(restaurantID, orderID string) [2]string {
		return [2]string{strings.ToLower(restaurantID), orderID}
	}
	kind := make(map[[2]string]domain.Change, len(changes))
	for _, c := range changes {
		kind[key(c.restaurantID, c.orderID)] = c.kind
	}
	events := make([]outbox.Event, 0, len(changes))
	for _, o := range orders { // distinct, as Replace requires
		k, ok := kind[key(o.RestaurantID, o.OrderID)]
		if !ok {
			continue
		}
		e := decide(o, k)
		events = append(events, outbox.Event{Type: e.Type, RestaurantID: e.RestaurantID, Data: e.Data})
	}
	if len(events) != len(changes) {
		return fmt.Errorf("orders events: %d changes, %d events", len(changes), len(events))
	}
	return outbox.RecordPgx(ctx, tx, events...)
}

// newStages lists the staging tables of a replace.
func newStages() []*stage {
	return []*stage{
		{table: "orders", stage: "stage_orders", cols: orderColumns},
		{table: "order_details", stage: "stage_details", cols: detailColumns},
		{table: "order_item_names", stage: "stage_names", cols: []string{"restaurant_id", "name"}},
		{table: "order_item_keys", stage: "stage_keys", cols: itemKeyColumns},
	}
}

// replaceTx stores staged rows in tx: straight into the tables (direct) or
// through staging tables and set-based statements.
// locked runs (not direct) once the staged orders are locked, before they
// change, with the orders this replace inserted; after runs once they are
// stored.
func replaceTx(ctx context.Context, tx pgx.Tx, stages []*stage, n int, direct bool, locked func(created []change) error, after func() error) error {
	staged := stages
	if direct {
		staged = stages[2:3] // only the name dictionary needs ON CONFLICT
	}
	var ddl strings.Builder
	for _, st := range staged {
		fmt.Fprintf(&ddl, "CREATE TEMP TABLE %s (LIKE %s INCLUDING DEFAULTS) ON COMMIT DROP;", st.stage, st.table)
	}
	if _, err := tx.Exec(ctx, ddl.String()); err != nil {
		return fmt.Errorf("create staging tables: %w", err)
	}
	for _, st := range stages {
		if len(st.rows) == 0 {
			continue
		}
		target := st.stage
		if direct && st.table != "order_item_names" {
			target = st.table
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{target}, st.cols, pgx.CopyFromRows(st.rows)); err != nil {
			return fmt.Errorf("copy into %s: %w", target, err)
		}
	}
	var sqls strings.Builder
	if !direct {
		if n > 500 {
			if _, err := tx.Exec(ctx, "ANALYZE stage_orders"); err != nil {
				return fmt.Errorf("analyze staged orders: %w", err)
			}
		}
		cols := strings.Join(orderColumns, ", ")
		stored, staged, set := make([]string, 0, len(orderColumns)), make([]string, 0, len(orderColumns)), make([]string, 0, len(orderColumns))
		for _, c := range orderColumns[2:] {
			stored, staged, set = append(stored, "o."+c), append(staged, "s."+c), append(set, c+" = s."+c)
		}
		match := "o.restaurant_id = s.restaurant_id AND o.order_id = s.order_id"
		// New orders are inserted first (waiting for a concurrent first
		// insert of the same order), then every staged order is locked, in
		// key order, so concurrent replaces of an order serialise before
		// anything of it is swapped. Under the lock the stored row says which
		// item keys to delete (its occurred_at and item_keys); then the
		// orders that differ are updated and the details replaced.
		insert := fmt.Sprintf("INSERT INTO orders (%s) SELECT %s FROM stage_orders ORDER BY restaurant_id, order_id ON CONFLICT (restaurant_id, order_id) DO NOTHING", cols, cols)
		lock := fmt.Sprintf("SELECT 1 FROM orders o JOIN stage_orders s ON %s ORDER BY o.restaurant_id, o.order_id FOR UPDATE OF o", match)
		if locked == nil {
			fmt.Fprintf(&sqls, "%s;%s;", insert, lock)
		} else {
			// What the orders were before this replace is read under the
			// lock, in statements after it.
			created, err := insertedOrders(ctx, tx, insert)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, lock); err != nil {
				return fmt.Errorf("lock orders: %w", err)
			}
			if err := locked(created); err != nil {
				return err
			}
		}
		// Each stored key is found by its whole primary key (an item_key =
		// ANY(item_keys) condition may be left out of the index search).
		fmt.Fprintf(&sqls, `DELETE FROM order_item_keys k USING (SELECT o.restaurant_id, unnest(o.item_keys) AS item_key, o.occurred_at, o.order_id
			FROM orders o JOIN stage_orders s ON %s) old
			WHERE k.restaurant_id = old.restaurant_id AND k.item_key = old.item_key AND k.occurred_at = old.occurred_at AND k.order_id = old.order_id;`, match)
		fmt.Fprintf(&sqls, "UPDATE orders o SET %s, ingested_at = now() FROM stage_orders s WHERE %s AND (%s) IS DISTINCT FROM (%s);",
			strings.Join(set, ", "), match, strings.Join(stored, ", "), strings.Join(staged, ", "))
		if len(stages[3].rows) > 0 {
			sqls.WriteString("INSERT INTO order_item_keys (restaurant_id, item_key, occurred_at, order_id) SELECT restaurant_id, item_key, occurred_at, order_id FROM stage_keys;")
		}
		details := strings.Join(detailColumns, ", ")
		fmt.Fprintf(&sqls, "INSERT INTO order_details (%s) SELECT %s FROM stage_details ON CONFLICT (restaurant_id, order_id) DO UPDATE SET %s;",
			details, details, "lines = excluded.lines, vat_rows = excluded.vat_rows, refunded_items = excluded.refunded_items, payment_references = excluded.payment_references")
	}
	sqls.WriteString("INSERT INTO order_item_names (restaurant_id, name) SELECT restaurant_id, name FROM stage_names ORDER BY 1, 2 ON CONFLICT DO NOTHING;")
	if _, err := tx.Exec(ctx, sqls.String()); err != nil {
		return fmt.Errorf("replace orders: %w", err)
	}
	if after != nil {
		return after()
	}
	return nil
}

// insertedOrders runs the insert of the new orders and returns those it
// inserted, as created changes.
func insertedOrders(ctx context.Context, tx pgx.Tx, insert string) ([]change, error) {
	rows, err := tx.Query(ctx, insert+" RETURNING restaurant_id::text, order_id::text, $1::int", int(domain.Created))
	if err != nil {
		return nil, fmt.Errorf("insert orders: %w", err)
	}
	return collectChanges(rows)
}

// ItemKey is the per-restaurant key of a lower-cased line name in
// orders.item_keys and order_item_keys.
func ItemKey(restaurantID, lowerName string) int64 {
	// FNV-1a, 64 bits, over restaurantID, a zero byte and lowerName.
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := range len(restaurantID) {
		h = (h ^ uint64(restaurantID[i])) * prime
	}
	h *= prime // the zero byte
	for i := range len(lowerName) {
		h = (h ^ uint64(lowerName[i])) * prime
	}
	return int64(h) //nolint:gosec // a hash: wrapping into the signed range is intended
}

func appendRows(stages []*stage, o domain.Order, names map[[2]string]bool) {
	rid, oid := o.RestaurantID, o.OrderID
	keys := make([]int64, 0, len(o.Lines))
	for _, l := range o.Lines {
		name := strings.ToLower(l.Name)
		k := ItemKey(rid, name)
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
			stages[3].rows = append(stages[3].rows, []any{rid, k, o.OccurredAt, oid})
		}
		if !names[[2]string{rid, name}] {
			names[[2]string{rid, name}] = true
			stages[2].rows = append(stages[2].rows, []any{rid, name})
		}
	}
	stages[0].rows = append(stages[0].rows, []any{
		rid, oid, o.RestaurantOrderNumber, o.ReceiptHash, o.OccurredAt, o.BusinessDate.Time(),
		o.LocalMinute, o.OrderType, o.TableNumber, o.Status, o.RecordedPaymentMethod, o.PaymentMethod,
		o.Origin.Kind, o.Origin.Provider, o.OriginalAmountMinor, o.TotalAmountMinor, o.VatMinor,
		o.RefundAmountMinor, o.DiscountAmountMinor, o.GrossSalesMinor, o.NetSalesMinor, o.TipAmountMinor,
		o.Currency, o.VatAllocationMethod, o.TaxCountryCode, o.TaxRatesAsOf.Time(), o.LineCount,
		o.RefundedItemCount, o.PaymentReferenceCount, o.ItemNames(), keys,
	})
	var d [4][]byte
	appendDetails(&d, o)
	stages[1].rows = append(stages[1].rows, []any{rid, oid, string(d[0]), string(d[1]), string(d[2]), string(d[3])})
}

const summaryColumns = `order_id, restaurant_order_number, receipt_hash, occurred_at, business_date, order_type,
	table_number, status, payment_method, origin_kind, origin_provider, original_amount_minor, total_amount_minor,
	vat_minor, refund_amount_minor, discount_amount_minor, gross_sales_minor, net_sales_minor, tip_amount_minor,
	currency, vat_allocation_method, tax_country_code, tax_rates_as_of, line_count, refunded_item_count,
	payment_reference_count`

const summarySelect = "SELECT " + summaryColumns + " FROM orders"

// scanOrder reads a row of summaryColumns, then into more (further columns
// of the row).
func scanOrder(rows interface{ Scan(...any) error }, restaurantID string, more ...any) (domain.Order, error) {
	o := domain.Order{RestaurantID: restaurantID}
	var bd, asOf time.Time
	var table sql.NullInt32
	err := rows.Scan(append([]any{&o.OrderID, &o.RestaurantOrderNumber, &o.ReceiptHash, &o.OccurredAt, &bd, &o.OrderType,
		&table, &o.Status, &o.PaymentMethod, &o.Origin.Kind, &o.Origin.Provider, &o.OriginalAmountMinor, &o.TotalAmountMinor,
		&o.VatMinor, &o.RefundAmountMinor, &o.DiscountAmountMinor, &o.GrossSalesMinor, &o.NetSalesMinor, &o.TipAmountMinor,
		&o.Currency, &o.VatAllocationMethod, &o.TaxCountryCode, &asOf, &o.LineCount, &o.RefundedItemCount,
		&o.PaymentReferenceCount}, more...)...)
	if err != nil {
		return o, err
	}
	o.OccurredAt = o.OccurredAt.UTC()
	o.BusinessDate = bizdate.FromTime(bd.UTC())
	o.TaxRatesAsOf = bizdate.FromTime(asOf.UTC())
	if table.Valid {
		n := int(table.Int32)
		o.TableNumber = &n
	}
	return o, nil
}

// reader is the store reading from the pool Reads picks for this read (the
// primary without a replica): one pick for all the statements of a search
// or a details read.
func (s *Store) reader(ctx context.Context) *Store {
	if s.Reads == nil {
		return s
	}
	r := *s
	r.DB = s.Reads.DB(ctx).SQL
	return &r
}

// Search runs one keyset page of an order search.
func (s *Store) Search(ctx context.Context, f domain.Filter) (domain.Page, error) {
	return s.reader(ctx).search(ctx, f)
}

func (s *Store) search(ctx context.Context, f domain.Filter) (domain.Page, error) {
	if err := validTextFilters(f); err != nil {
		return domain.Page{}, err
	}
	var where []string
	args := []any{f.RestaurantID}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	where = append(where, "restaurant_id = $1")
	if f.OrderID != nil {
		where = append(where, "order_id = "+arg(*f.OrderID))
	}
	if f.ReceiptReference != nil {
		where = append(where, "receipt_hash = "+arg(*f.ReceiptReference))
	}
	if f.RestaurantOrderNumber != nil {
		where = append(where, "restaurant_order_number = "+arg(*f.RestaurantOrderNumber))
	}
	if f.PaymentMethod != nil {
		where = append(where, "payment_method = "+arg(*f.PaymentMethod))
	}
	if f.Status != nil {
		where = append(where, "status = "+arg(*f.Status))
	}
	// amounts are the amount range's conditions, kept apart for the walk
	// that checks the newest orders against them.
	var amounts []string
	if f.MinTotalMinor != nil {
		amounts = append(amounts, "total_amount_minor >= "+arg(*f.MinTotalMinor))
	}
	if f.MaxTotalMinor != nil {
		amounts = append(amounts, "total_amount_minor <= "+arg(*f.MaxTotalMinor))
	}
	switch {
	case f.StartMinute != nil && f.EndMinute != nil && *f.StartMinute > *f.EndMinute:
		where = append(where, fmt.Sprintf("(local_minute >= %s OR local_minute <= %s)", arg(*f.StartMinute), arg(*f.EndMinute)))
	default:
		if f.StartMinute != nil {
			where = append(where, "local_minute >= "+arg(*f.StartMinute))
		}
		if f.EndMinute != nil {
			where = append(where, "local_minute <= "+arg(*f.EndMinute))
		}
	}
	// bounds are the conditions on (occurred_at, order_id) alone, which
	// the item-key walks of item_name apply too.
	var bounds []string
	if f.StartDate != nil {
		// The instant range lets the (restaurant, occurred_at) index do the
		// work; the business dates stored at ingestion keep the answer exact.
		bounds = append(bounds, "occurred_at >= "+arg(f.From), "occurred_at < "+arg(f.Until))
		where = append(where, bounds...)
		where = append(where, fmt.Sprintf("business_date BETWEEN %s AND %s", arg(f.StartDate.Time()), arg(f.EndDate.Time())))
	}
	if f.After != nil {
		bounds = append(bounds, fmt.Sprintf("(occurred_at, order_id) < (%s, %s)", arg(f.After.OccurredAt), arg(f.After.OrderID)))
		where = append(where, bounds[len(bounds)-1])
	}
	others := slices.Clone(where)
	where = append(where, amounts...)
	limit := fmt.Sprintf(" LIMIT %d", f.Limit+1)
	var orders []domain.Order
	var err error
	timeOfDay := f.StartMinute != nil || f.EndMinute != nil
	sparse := false
	if f.ItemName == nil && timeOfDay && len(amounts) == 0 && f.StartDate != nil {
		if sparse, err = s.sparseTimeOfDay(ctx, f); err != nil {
			return domain.Page{}, err
		}
	}
	switch {
	case sparse:
		// A time of day few orders of the window fall in (the night, when
		// the restaurant is closed) would walk every entry of the window
		// below: its orders are read date by date from orders_local_time
		// instead, and the page picked from them.
		in := args
		probe := timeOfDayProbe(f, func(v any) string { in = append(in, v); return fmt.Sprintf("$%d", len(in)) }, "*", "")
		orders, err = s.queryOrders(ctx, f.RestaurantID, "WITH m AS MATERIALIZED ("+probe+") SELECT "+summaryColumns+" FROM m WHERE "+
			strings.Join(where, " AND ")+newestFirst+limit, in)
	case f.ItemName == nil && len(amounts) > 0 && !timeOfDay:
		// Which index answers an amount range is the planner's guess at how
		// many orders of the window it holds, from the partition's
		// statistics, which mix restaurants of different price levels: a
		// wide range of one restaurant's orders can be taken for a rare one
		// and every match read from orders_total and sorted. So the newest
		// orders passing the other filters are checked first, which fills a
		// page within a few rows when the range is common; only when they do
		// not is the page picked by its keys.
		orders, err = s.newest(ctx, f, others, "total_amount_minor", strings.Join(amounts, " AND "), args)
		if err == nil && len(orders) <= f.Limit {
			orders, err = s.pageByKeys(ctx, f, where, args)
		}
	case f.ItemName == nil && timeOfDay:
		orders, err = s.pageByKeys(ctx, f, where, args)
	case f.ItemName == nil:
		orders, err = s.queryOrders(ctx, f.RestaurantID, summarySelect+" WHERE "+strings.Join(where, " AND ")+newestFirst+limit, args)
	default:
		orders, err = s.searchItemName(ctx, f, where, bounds, args)
	}
	if err != nil {
		return domain.Page{}, err
	}
	var page domain.Page
	page.Orders = orders
	if len(page.Orders) > f.Limit {
		page.Orders = page.Orders[:f.Limit]
		last := page.Orders[f.Limit-1]
		page.Next = &domain.Position{OccurredAt: last.OccurredAt, OrderID: last.OrderID}
	}
	if err := s.loadLines(ctx, f.RestaurantID, page.Orders); err != nil {
		return domain.Page{}, err
	}
	return page, nil
}

// pageByKeys answers a filter that matches orders all over the window (an
// amount range, a time of day): the page's keys come from orders_total or
// orders_recent alone (their INCLUDE columns), then only the page is read.
// The page is fetched by its orders_recent key: the page's entries sit
// together there and newest-first pages sit together in the table, where
// primary-key lookups land on scattered leaf pages. The restaurant is named
// outside the keys too, so that the planner reads only its partition: left
// to the keys, it plans the lookup on every partition, which took 2–3 ms of
// planning for a search answered in 0.3.
func (s *Store) pageByKeys(ctx context.Context, f domain.Filter, where []string, args []any) ([]domain.Order, error) {
	limit := fmt.Sprintf(" LIMIT %d", f.Limit+1)
	return s.queryOrders(ctx, f.RestaurantID, summarySelect+" WHERE restaurant_id = $1 AND (restaurant_id, occurred_at, order_id) IN (SELECT restaurant_id, occurred_at, order_id FROM orders WHERE "+
		strings.Join(where, " AND ")+newestFirst+limit+")"+newestFirst, args)
}

// sparseOrders is the most orders of the window a time of day may hold to
// be read from orders_local_time; one holding more fills a page soon on
// the newest-first walk of orders_recent.
const sparseOrders = 200

// timeOfDayProbe is a query of the window's orders in the filter's time of
// day, date by date and minute range by minute range on orders_local_time
// (one index descent each), selecting cols, with limit (if any) per range.
func timeOfDayProbe(f domain.Filter, arg func(any) string, cols, limit string) string {
	var dates []time.Time
	for d := *f.StartDate; !d.After(*f.EndDate); d = d.AddDays(1) {
		dates = append(dates, d.Time())
	}
	lo, hi := 0, 24*60-1
	if f.StartMinute != nil {
		lo = *f.StartMinute
	}
	if f.EndMinute != nil {
		hi = *f.EndMinute
	}
	ranges := [][2]int{{lo, hi}}
	if lo > hi { // across midnight
		ranges = [][2]int{{lo, 24*60 - 1}, {0, hi}}
	}
	restaurant, days := arg(f.RestaurantID), arg(dates)
	parts := make([]string, len(ranges))
	for i, r := range ranges {
		parts[i] = fmt.Sprintf("(SELECT %s FROM orders WHERE restaurant_id = %s AND business_date = ANY(%s) AND local_minute BETWEEN %s AND %s%s)",
			cols, restaurant, days, arg(r[0]), arg(r[1]), limit)
	}
	return strings.Join(parts, " UNION ALL ")
}

// sparseTimeOfDay tells whether the filter's time of day holds at most
// sparseOrders orders of the window, counted on orders_local_time alone.
func (s *Store) sparseTimeOfDay(ctx context.Context, f domain.Filter) (bool, error) {
	var args []any
	probe := timeOfDayProbe(f, func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }, "1", fmt.Sprintf(" LIMIT %d", sparseOrders+1))
	var n int
	if err := s.DB.QueryRowContext(ctx, "SELECT count(*) FROM ("+probe+") m", args...).Scan(&n); err != nil {
		return false, err
	}
	return n <= sparseOrders, nil
}

// newestFirst is the order of every search answer.
const newestFirst = " ORDER BY occurred_at DESC, order_id DESC"

// maxItemKeys is the most line names an item_name search walks the item
// keys of; a substring found in more names is common, and the newest orders
// are checked instead (newest), then the whole window.
const maxItemKeys = 64

// recentCandidates is how many of the newest orders passing the other
// filters newest checks against a common condition: one that fills no
// page among them is searched for in the whole window.
const recentCandidates = 400

// newest checks the recentCandidates newest orders of the window passing
// where against cond, which reads the column col, and answers the page's
// orders among them, newest first; fewer than a page and its next when cond
// is rarer than that. The candidates are read with their keys and col
// alone, so a walk of an index that carries col reads the index alone
// (orders_recent carries total_amount_minor); then only the page's orders
// are read.
func (s *Store) newest(ctx context.Context, f domain.Filter, where []string, col, cond string, args []any) ([]domain.Order, error) {
	q := fmt.Sprintf("%s WHERE restaurant_id = $1 AND (restaurant_id, occurred_at, order_id) IN (SELECT restaurant_id, occurred_at, order_id FROM "+
		"(SELECT restaurant_id, occurred_at, order_id, %s FROM orders WHERE %s%s LIMIT %d) c WHERE %s%s LIMIT %d)%s",
		summarySelect, col, strings.Join(where, " AND "), newestFirst, recentCandidates, cond, newestFirst, f.Limit+1, newestFirst)
	return s.queryOrders(ctx, f.RestaurantID, q, args)
}

// searchItemName answers item_name in two steps: the substring is matched
// against the restaurant's distinct line names (none: no order can match);
// then, for each name, order_item_keys is walked newest first from the
// cursor within the window, the walks merged and duplicates (an order with
// several of the names) dropped as they stream by, and each order joined by
// its orders_recent key and checked against the other filters, until the
// page is full. A rare item reads its page, not every order of the window.
func (s *Store) searchItemName(ctx context.Context, f domain.Filter, where, bounds []string, args []any) ([]domain.Order, error) {
	pattern := "%" + escapeLike(strings.ToLower(*f.ItemName)) + "%"
	var keys []int64
	err := queryAll(ctx, s.DB, `SELECT name FROM order_item_names WHERE restaurant_id = $1 AND name LIKE $2 LIMIT $3`, func(rows *sql.Rows) error {
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
		keys = append(keys, ItemKey(f.RestaurantID, name))
		return nil
	}, f.RestaurantID, pattern, maxItemKeys+1)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, nil
	}
	args = append(args, pattern)
	// The names' LIKE again on the order: exact even if two names' keys
	// collided.
	like := fmt.Sprintf("item_names LIKE $%d", len(args))
	cond := strings.Join(where, " AND ") + " AND " + like
	limit := fmt.Sprintf(" LIMIT %d", f.Limit+1)
	if len(keys) > maxItemKeys {
		// A substring found in that many names ("l", "g") is common: the
		// newest orders passing the other filters are checked first, which
		// fills a page within a few rows; only when they do not is the
		// window searched with the LIKE.
		orders, err := s.newest(ctx, f, where, "item_names", like, args)
		if err != nil || len(orders) > f.Limit {
			return orders, err
		}
		return s.queryOrders(ctx, f.RestaurantID, summarySelect+" WHERE "+cond+newestFirst+limit, args)
	}
	walk := strings.Join(append([]string{"restaurant_id = $1"}, bounds...), " AND ")
	walks := make([]string, len(keys))
	for i, k := range keys {
		args = append(args, k)
		walks[i] = fmt.Sprintf("(SELECT occurred_at, order_id FROM order_item_keys WHERE %s AND item_key = $%d%s)", walk, len(args), newestFirst)
	}
	// The plan streams: Merge Append of the walks, Unique, then a Nested
	// Loop that looks each order up by its key, under the Limit. The ORDER
	// BY of the merged walks keeps them from being hashed; the lookup's
	// LIMIT 1 (there is one order per key) keeps it a lookup per key, as
	// the planner's guess at how many orders pass the LIKE and the other
	// filters says nothing about how soon the page fills.
	q := "SELECT o.* FROM (SELECT DISTINCT occurred_at, order_id FROM (" + strings.Join(walks, " UNION ALL ") + ") w" + newestFirst + ") k" +
		" CROSS JOIN LATERAL (SELECT " + summaryColumns + " FROM orders WHERE " + cond +
		" AND occurred_at = k.occurred_at AND order_id = k.order_id LIMIT 1) o ORDER BY k.occurred_at DESC, k.order_id DESC" + limit
	return s.queryOrders(ctx, f.RestaurantID, q, args)
}

func (s *Store) queryOrders(ctx context.Context, restaurantID, q string, args []any) ([]domain.Order, error) {
	// Plan with the actual values every time: a cached generic plan cannot
	// tell a 31-day window of a busy restaurant from a quiet one and picks
	// sort-based plans that read the whole window.
	if s.observe != nil {
		s.observe(q, args)
	}
	args = append([]any{pgx.QueryExecModeCacheDescribe}, args...)
	rows, err := s.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var orders []domain.Order
	for rows.Next() {
		o, err := scanOrder(rows, restaurantID)
		if err != nil {
			return nil, err
		}
		orders = append(orders, o)
	}
	return orders, rows.Err()
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// loadLines fills the lines of each order, up to domain.SearchLineCap.
func (s *Store) loadLines(ctx context.Context, restaurantID string, orders []domain.Order) error {
	if len(orders) == 0 {
		return nil
	}
	ids := make([]string, len(orders))
	index := make(map[string]int, len(orders))
	for i, o := range orders {
		ids[i] = o.OrderID
		index[o.OrderID] = i
	}
	return queryAll(ctx, s.DB, `SELECT order_id, lines FROM order_details WHERE restaurant_id = $1 AND order_id = ANY($2)`, func(rows *sql.Rows) error {
		var oid string
		var d details
		if err := rows.Scan(&oid, &d.lines); err != nil {
			return err
		}
		o := &orders[index[oid]]
		if err := d.fill(o, domain.SearchLineCap); err != nil {
			return fmt.Errorf("order %s: %w", oid, err)
		}
		return nil
	}, restaurantID, ids)
}

// queryAll runs q and calls scan for every row.
func queryAll(ctx context.Context, db *sql.DB, q string, scan func(*sql.Rows) error, args ...any) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Get reads one order of a restaurant with its details (lines, refunded
// items and payment references capped), in one statement.
func (s *Store) Get(ctx context.Context, restaurantID, orderID string) (domain.Order, error) {
	return s.reader(ctx).get(ctx, restaurantID, orderID)
}

func (s *Store) get(ctx context.Context, restaurantID, orderID string) (domain.Order, error) {
	// Postgres refuses a query with invalid text (an internal error);
	// callers check it first, this keeps it so for any caller.
	if err := domain.OrderIDParam(orderID); err != nil {
		return domain.Order{}, err
	}
	var d details
	row := s.DB.QueryRowContext(ctx, "SELECT "+summaryColumns+", lines, vat_rows, refunded_items, payment_references"+
		" FROM orders JOIN order_details USING (restaurant_id, order_id) WHERE restaurant_id = $1 AND order_id = $2", restaurantID, orderID)
	o, err := scanOrder(row, restaurantID, &d.lines, &d.vatRows, &d.refundedItems, &d.paymentReferences)
	if errors.Is(err, sql.ErrNoRows) {
		return o, domain.ErrNotFound
	}
	if err != nil {
		return o, err
	}
	if err := d.fill(&o, domain.DetailLineCap); err != nil {
		return o, fmt.Errorf("order %s: %w", orderID, err)
	}
	return o, nil
}

// validTextFilters refuses a filter Postgres could not compare: the text
// rules of the api's ParseSearch, for callers that build a Filter themselves.
func validTextFilters(f domain.Filter) error {
	for _, t := range []struct {
		name string
		v    *string
		max  int
	}{
		{"order_id", f.OrderID, domain.MaxOrderIDLength},
		{"receipt_reference", f.ReceiptReference, domain.MaxReceiptRefLength},
		{"item_name", f.ItemName, domain.MaxItemNameLength},
	} {
		if t.v != nil {
			if err := domain.TextParam(t.name, *t.v, t.max); err != nil {
				return err
			}
		}
	}
	if f.After != nil {
		return domain.OrderIDParam(f.After.OrderID)
	}
	return nil
}
