package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"partnerapi.dev/pkg/outbox"
	"partnerapi.dev/services/accounting/internal/domain"
)

// BulkIngest loads a whole import in one transaction, so a bad line anywhere
// stores nothing. fn hands the parsed batches to add, which COPYs them into
// unindexed staging tables; at the end the staged rows are merged into the
// real tables with one set-based statement per table (the last line of a key
// wins, an unchanged fingerprint leaves the row alone), the totals of every
// touched day are rebuilt with one statement per totals table, and
// refund_event.recorded is recorded for each refund event not stored before.
//
// It runs on pgx rather than gorm because gorm cannot COPY, and per-row
// INSERTs of a million records take minutes.
//
// Instead of one advisory lock per touched day (a bulk load touches
// thousands, more than the lock table holds), the merge locks the source and
// totals tables in SHARE ROW EXCLUSIVE mode: other ingestions wait for the
// commit, readers and corrections do not (a correction that read a source
// before the load changed it is reported stale by its fingerprint).
func (s *Store) BulkIngest(ctx context.Context, fn func(add func(domain.Batch) error) error) error {
	sqlDB, err := s.DB.DB()
	if err != nil {
		return err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		return pgx.BeginFunc(ctx, pc, func(tx pgx.Tx) error {
			b := &bulkIngest{tx: tx}
			if _, err := tx.Exec(ctx, stageDDL); err != nil {
				return fmt.Errorf("prepare the import: %w", err)
			}
			if err := fn(func(batch domain.Batch) error { return b.add(ctx, batch) }); err != nil {
				return err
			}
			return b.merge(ctx)
		})
	})
}

// The staging tables hold the lines as parsed, in input order (seq); text
// columns for uuid, date, text[] and jsonb values, cast once in the merge.
const stageDDL = `
CREATE TEMP TABLE stage_sources (
  seq bigint, restaurant_id text, source_kind text, source_record_id text, receipt_hash text, parent_receipt_hash text,
  component_id text, tab_split_id text, source_group_id text, order_ids text, occurred_at timestamptz, business_date text,
  method_key text, gross_minor bigint, vat_minor bigint, transaction_count bigint, vat_known boolean,
  gross_zero bigint, gross_special bigint, gross_reduced bigint, gross_standard bigint, gross_unknown bigint,
  vat_zero bigint, vat_special bigint, vat_reduced bigint, vat_standard bigint, vat_unknown bigint,
  discount_minor bigint, tip_minor bigint, fingerprint text, updated_at timestamptz) ON COMMIT DROP;
CREATE TEMP TABLE stage_refunds (
  seq bigint, restaurant_id text, refund_id text, kind text, occurred_at timestamptz, refund_business_date text,
  order_id text, original_business_date text, method_key text, amount_minor bigint, returned_lines text,
  impact_gross_minor bigint, impact_net_minor bigint, impact_vat_minor bigint, impact_vat_by_rate text,
  legacy_timing boolean, fingerprint text, event_type text, event_data text) ON COMMIT DROP;
SET LOCAL work_mem = '256MB';`

var stageSourceColumns = []string{"seq", "restaurant_id", "source_kind", "source_record_id", "receipt_hash", "parent_receipt_hash",
	"component_id", "tab_split_id", "source_group_id", "order_ids", "occurred_at", "business_date", "method_key", "gross_minor",
	"vat_minor", "transaction_count", "vat_known", "gross_zero", "gross_special", "gross_reduced", "gross_standard", "gross_unknown",
	"vat_zero", "vat_special", "vat_reduced", "vat_standard", "vat_unknown", "discount_minor", "tip_minor", "fingerprint", "updated_at"}

var stageRefundColumns = []string{"seq", "restaurant_id", "refund_id", "kind", "occurred_at", "refund_business_date", "order_id",
	"original_business_date", "method_key", "amount_minor", "returned_lines", "impact_gross_minor", "impact_net_minor",
	"impact_vat_minor", "impact_vat_by_rate", "legacy_timing", "fingerprint", "event_type", "event_data"}

// storedRefundColumns are the staged columns refund_events keeps: all but
// the input position and the event.
var storedRefundColumns = stageRefundColumns[1 : len(stageRefundColumns)-2]

type bulkIngest struct {
	tx  pgx.Tx
	seq int64
}

// add COPYs one parsed batch into the staging tables.
func (b *bulkIngest) add(ctx context.Context, batch domain.Batch) error {
	if len(batch.Sources) > 0 {
		rows := sourceRows(batch.Sources)
		first := b.seq
		b.seq += int64(len(rows))
		if _, err := b.tx.CopyFrom(ctx, pgx.Identifier{"stage_sources"}, stageSourceColumns,
			pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
				r := rows[i]
				return []any{first + int64(i), r.RestaurantID, r.SourceKind, r.SourceRecordID, r.ReceiptHash, r.ParentReceiptHash,
					r.ComponentID, r.TabSplitID, r.SourceGroupID, r.OrderIDs, r.OccurredAt, r.BusinessDate, r.MethodKey, r.GrossMinor,
					r.VatMinor, r.TransactionCount, r.VatKnown, r.GrossZero, r.GrossSpecial, r.GrossReduced, r.GrossStandard, r.GrossUnknown,
					r.VatZero, r.VatSpecial, r.VatReduced, r.VatStandard, r.VatUnknown, r.DiscountMinor, r.TipMinor, r.Fingerprint, r.UpdatedAt}, nil
			})); err != nil {
			return fmt.Errorf("stage payment sources: %w", err)
		}
	}
	if len(batch.Refunds) == 0 {
		return nil
	}
	// Every line is staged with its position: the merge keeps each key's
	// last line, and records its event at that line's place in the input.
	first := b.seq
	b.seq += int64(len(batch.Refunds))
	_, err := b.tx.CopyFrom(ctx, pgx.Identifier{"stage_refunds"}, stageRefundColumns,
		pgx.CopyFromSlice(len(batch.Refunds), func(i int) ([]any, error) {
			w := batch.Refunds[i]
			r, err := refundEventRow(w)
			if err != nil {
				return nil, err
			}
			e := w.Recorded()
			data, err := json.Marshal(e.Data)
			if err != nil {
				return nil, err
			}
			return []any{first + int64(i), r.RestaurantID, r.RefundID, r.Kind, r.OccurredAt, r.RefundBusinessDate, r.OrderID,
				r.OriginalBusinessDate, r.MethodKey, r.AmountMinor, r.ReturnedLines, r.ImpactGrossMinor, r.ImpactNetMinor,
				r.ImpactVatMinor, r.ImpactVatByRate, r.LegacyTiming, r.Fingerprint, e.Type, string(data)}, nil
		}))
	if err != nil {
		return fmt.Errorf("stage refund events: %w", err)
	}
	return nil
}

// merge moves the staged rows into the real tables and rebuilds the totals
// of the touched days.
func (b *bulkIngest) merge(ctx context.Context) error {
	if _, err := b.tx.Exec(ctx, `LOCK TABLE payment_sources, daily_method_totals, daily_source_state, refund_events IN SHARE ROW EXCLUSIVE MODE`); err != nil {
		return err
	}
	// The last staged line of each key, in the order of payment_sources_day
	// (one sort), so a fresh load stores each restaurant's day together and
	// a workspace page reads a few heap pages, not one per source. A key
	// sent with two business dates is left twice by the DISTINCT ON; its
	// earlier line is deleted. The touched days are each key's business
	// date and, for a changed source, the date it had before.
	if _, err := b.tx.Exec(ctx, `
CREATE TEMP TABLE bulk_sources ON COMMIT DROP AS
SELECT DISTINCT ON (restaurant_id, business_date, source_kind, source_record_id) * FROM stage_sources
ORDER BY restaurant_id, business_date, source_kind, source_record_id, seq DESC;
DELETE FROM bulk_sources b USING (SELECT restaurant_id, source_kind, source_record_id, max(seq) AS seq FROM bulk_sources
  GROUP BY restaurant_id, source_kind, source_record_id HAVING count(*) > 1) m
WHERE b.restaurant_id = m.restaurant_id AND b.source_kind = m.source_kind AND b.source_record_id = m.source_record_id AND b.seq < m.seq;
CREATE TEMP TABLE bulk_days ON COMMIT DROP AS
SELECT restaurant_id::uuid AS restaurant_id, business_date::date AS business_date FROM bulk_sources
UNION
SELECT p.restaurant_id, p.business_date FROM bulk_sources s
JOIN payment_sources p ON p.restaurant_id = s.restaurant_id::uuid AND p.source_kind = s.source_kind
  AND p.source_record_id = s.source_record_id AND p.fingerprint <> s.fingerprint;
ANALYZE bulk_days;`); err != nil {
		return fmt.Errorf("stage the touched days: %w", err)
	}
	if err := b.mergeSources(ctx); err != nil {
		return fmt.Errorf("merge payment sources: %w", err)
	}
	for _, q := range rebuildDays {
		if _, err := b.tx.Exec(ctx, fmt.Sprintf(q, "bulk_days")); err != nil {
			return fmt.Errorf("rebuild the day totals: %w", err)
		}
	}
	return b.mergeRefunds(ctx)
}

// mergeRefunds upserts the staged refund events and records the Recorded
// event of those not stored before, in input order.
func (b *bulkIngest) mergeRefunds(ctx context.Context) error {
	if _, err := b.tx.Exec(ctx, `
CREATE TEMP TABLE bulk_refunds ON COMMIT DROP AS
SELECT DISTINCT ON (restaurant_id, refund_id) * FROM stage_refunds ORDER BY restaurant_id, refund_id, seq DESC`); err != nil {
		return fmt.Errorf("stage refund events: %w", err)
	}
	rows, err := b.tx.Query(ctx, `SELECT s.restaurant_id, s.event_type, s.event_data FROM bulk_refunds s
WHERE NOT EXISTS (SELECT 1 FROM refund_events e WHERE e.restaurant_id = s.restaurant_id::uuid AND e.refund_id = s.refund_id)
ORDER BY s.seq`)
	if err != nil {
		return err
	}
	events, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (outbox.Event, error) {
		var restaurant, typ, data string
		err := r.Scan(&restaurant, &typ, &data)
		return outbox.Event{Type: typ, RestaurantID: restaurant, Data: json.RawMessage(data)}, err
	})
	if err != nil {
		return err
	}
	sets := make([]string, len(refundUpdateColumns))
	for i, c := range refundUpdateColumns {
		sets[i] = c + " = EXCLUDED." + c
	}
	if _, err := b.tx.Exec(ctx, `INSERT INTO refund_events (`+strings.Join(storedRefundColumns, ", ")+`)
SELECT restaurant_id::uuid, refund_id, kind, occurred_at, refund_business_date::date, order_id, original_business_date::date,
  method_key, amount_minor, returned_lines::jsonb, impact_gross_minor, impact_net_minor, impact_vat_minor,
  impact_vat_by_rate::jsonb, legacy_timing, fingerprint
FROM bulk_refunds
ON CONFLICT (restaurant_id, refund_id) DO UPDATE SET `+strings.Join(sets, ", ")+`
WHERE refund_events.fingerprint <> EXCLUDED.fingerprint`); err != nil {
		return fmt.Errorf("merge refund events: %w", err)
	}
	return outbox.RecordPgx(ctx, b.tx, events...)
}

const insertSources = `INSERT INTO payment_sources (` + "%s" + `)
SELECT restaurant_id::uuid, source_kind, source_record_id, receipt_hash, parent_receipt_hash, component_id, tab_split_id,
  source_group_id, order_ids::text[], occurred_at, business_date::date, method_key, gross_minor, vat_minor, transaction_count,
  vat_known, gross_zero, gross_special, gross_reduced, gross_standard, gross_unknown, vat_zero, vat_special, vat_reduced,
  vat_standard, vat_unknown, discount_minor, tip_minor, fingerprint, updated_at
FROM bulk_sources`

// mergeSources upserts the staged sources. Into an empty table (a first
// load) no row can conflict, as the staged keys are unique: the table's
// indexes are dropped, the rows inserted, and the indexes built again from
// their catalog definitions, one sorted build each instead of a million
// random inserts into the primary key.
func (b *bulkIngest) mergeSources(ctx context.Context) error {
	cols := strings.Join(stageSourceColumns[1:], ", ")
	var empty bool
	if err := b.tx.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM payment_sources)`).Scan(&empty); err != nil {
		return err
	}
	if !empty {
		sets := make([]string, len(sourceUpdateColumns))
		for i, c := range sourceUpdateColumns {
			sets[i] = c + " = EXCLUDED." + c
		}
		_, err := b.tx.Exec(ctx, fmt.Sprintf(insertSources, cols)+`
ON CONFLICT (restaurant_id, source_kind, source_record_id) DO UPDATE SET `+strings.Join(sets, ", ")+`
WHERE payment_sources.fingerprint <> EXCLUDED.fingerprint`)
		return err
	}
	rows, err := b.tx.Query(ctx, `SELECT ic.relname, pg_get_indexdef(i.indexrelid), coalesce(c.conname, ''),
  CASE c.contype WHEN 'p' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END
FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.conrelid = i.indrelid
WHERE i.indrelid = 'payment_sources'::regclass`)
	if err != nil {
		return err
	}
	type index struct{ name, def, constraint, kind string }
	indexes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (index, error) {
		var x index
		return x, r.Scan(&x.name, &x.def, &x.constraint, &x.kind)
	})
	if err != nil {
		return err
	}
	var drop, build strings.Builder
	for _, x := range indexes {
		if x.constraint != "" {
			fmt.Fprintf(&drop, "ALTER TABLE payment_sources DROP CONSTRAINT %s;", pgx.Identifier{x.constraint}.Sanitize())
		} else {
			fmt.Fprintf(&drop, "DROP INDEX %s;", pgx.Identifier{x.name}.Sanitize())
		}
		build.WriteString(x.def + ";")
		if x.constraint != "" {
			fmt.Fprintf(&build, "ALTER TABLE payment_sources ADD CONSTRAINT %s %s USING INDEX %s;",
				pgx.Identifier{x.constraint}.Sanitize(), x.kind, pgx.Identifier{x.name}.Sanitize())
		}
	}
	if _, err := b.tx.Exec(ctx, drop.String()+"SET LOCAL maintenance_work_mem = '256MB';"); err != nil {
		return err
	}
	if _, err := b.tx.Exec(ctx, fmt.Sprintf(insertSources, cols)); err != nil {
		return err
	}
	_, err = b.tx.Exec(ctx, build.String())
	return err
}
