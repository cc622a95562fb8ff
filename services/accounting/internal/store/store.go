// Package store keeps the accounting schema in Postgres through gorm:
// payment sources with per-day totals rebuilt in the ingesting transaction,
// refund events, the append-only correction ledger and the day revisions.
// Writes that touch a day hold its advisory lock (the canonical day lock).
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/database"
	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/pkg/idempotency"
	"partnerapi.dev/pkg/outbox"
	"partnerapi.dev/services/accounting/internal/domain"
	"partnerapi.dev/services/contracts"
)

// Store implements domain.Repository.
type Store struct {
	// DB is the primary: every write, and the reads made under a write's
	// locks.
	DB *gorm.DB
	// Reads, when set, serves the reads outside writes (reports, previews,
	// refunds, the summary and the workspace) from a streaming replica that
	// has replayed every write committed before the read began.
	Reads *database.Reads
}

// readDB is where a read outside a write goes.
func (s *Store) readDB(ctx context.Context) *gorm.DB {
	if s.Reads != nil {
		return s.Reads.Gorm(ctx)
	}
	return s.DB.WithContext(ctx)
}

var _ domain.Repository = (*Store)(nil)

// reader answers the reads from a pool or a transaction.
type reader struct{ db *gorm.DB }

func (s *Store) r(ctx context.Context) reader { return reader{s.readDB(ctx)} }

// DayLockKey is the advisory lock key of (restaurant, business date).
func DayLockKey(restaurant string, date bizdate.Date) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("accounting.day/" + strings.ToLower(restaurant) + "/" + date.String()))
	return int64(h.Sum64() & 0x7fffffffffffffff)
}

func lockDay(tx *gorm.DB, restaurant string, date bizdate.Date) error {
	return tx.Exec(`SELECT pg_advisory_xact_lock(?)`, DayLockKey(restaurant, date)).Error
}

// lockIngestion takes the ingestion locks of the restaurants (in order, so
// two ingestions never wait for each other in a circle). An ingestion holds
// them before it reads which days its sources were on: another ingestion
// moving one of those sources to another day has then committed, and the
// day it left is rebuilt too. Corrections do not take them. The table lock
// waits for a bulk load in progress (which holds payment_sources in SHARE
// ROW EXCLUSIVE mode) for the same reason; ingestions do not wait for each
// other on it.
func lockIngestion(tx *gorm.DB, restaurants []string) error {
	if err := tx.Exec(`LOCK TABLE payment_sources IN ROW EXCLUSIVE MODE`).Error; err != nil {
		return err
	}
	for _, r := range restaurants {
		h := fnv.New64a()
		_, _ = h.Write([]byte("accounting.ingestion/" + r))
		if err := tx.Exec(`SELECT pg_advisory_xact_lock(?)`, int64(h.Sum64()&0x7fffffffffffffff)).Error; err != nil {
			return err
		}
	}
	return nil
}

type dayKey struct {
	restaurant string
	date       bizdate.Date
}

// paymentSource is a row of payment_sources.
type paymentSource struct {
	RestaurantID                                                       string
	SourceKind                                                         string `gorm:"primaryKey"`
	SourceRecordID                                                     string `gorm:"primaryKey"`
	ReceiptHash                                                        string
	ParentReceiptHash                                                  *string
	ComponentID                                                        *string
	TabSplitID                                                         *string
	SourceGroupID                                                      *string
	OrderIDs                                                           string `gorm:"column:order_ids;type:text[]"`
	OccurredAt                                                         time.Time
	BusinessDate                                                       string `gorm:"type:date"`
	MethodKey                                                          string
	GrossMinor                                                         int64
	VatMinor                                                           int64
	TransactionCount                                                   int64
	VatKnown                                                           bool
	GrossZero, GrossSpecial, GrossReduced, GrossStandard, GrossUnknown int64
	VatZero, VatSpecial, VatReduced, VatStandard, VatUnknown           int64
	DiscountMinor                                                      int64
	TipMinor                                                           int64
	Fingerprint                                                        string
	UpdatedAt                                                          time.Time
}

func (paymentSource) TableName() string { return "payment_sources" }

// refundEvent is a row of refund_events.
type refundEvent struct {
	RestaurantID         string
	RefundID             string
	Kind                 string
	OccurredAt           time.Time
	RefundBusinessDate   string `gorm:"type:date"`
	OrderID              *string
	OriginalBusinessDate *string `gorm:"type:date"`
	MethodKey            string
	AmountMinor          int64
	ReturnedLines        string `gorm:"type:jsonb"`
	ImpactGrossMinor     *int64
	ImpactNetMinor       *int64
	ImpactVatMinor       *int64
	ImpactVatByRate      *string `gorm:"type:jsonb"`
	LegacyTiming         bool
	Fingerprint          string
}

func (refundEvent) TableName() string { return "refund_events" }

// upsertBatch is how many rows one INSERT carries.
const upsertBatch = 500

// Ingest stores a batch in one transaction: sources and refund events are
// upserted by their natural keys (a row whose fingerprint is unchanged is
// left alone), then the totals of every touched day (old and new business
// dates of a changed source) are rebuilt under the day locks, taken in a
// fixed order so concurrent ingestions and corrections cannot deadlock.
func (s *Store) Ingest(ctx context.Context, b domain.Batch) error {
	sources := sourceRows(b.Sources)
	refunds, err := refundRows(b.Refunds)
	if err != nil {
		return err
	}
	var restaurants []string
	// Every restaurant of the batch, refunds' too: which refunds are new
	// is read under the restaurant's lock, so two ingestions of one new
	// refund record it once.
	for _, r := range sources {
		restaurants = append(restaurants, strings.ToLower(r.RestaurantID))
	}
	for _, r := range refunds {
		restaurants = append(restaurants, strings.ToLower(r.RestaurantID))
	}
	slices.Sort(restaurants)
	restaurants = slices.Compact(restaurants)
	return s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockIngestion(tx, restaurants); err != nil {
			return err
		}
		touched := map[dayKey]bool{}
		keys := make([][]any, 0, len(sources))
		for _, r := range sources {
			d, _ := bizdate.Parse(r.BusinessDate)
			touched[dayKey{r.RestaurantID, d}] = true
			keys = append(keys, []any{r.RestaurantID, r.SourceKind, r.SourceRecordID})
		}
		for chunk := range slices.Chunk(keys, upsertBatch) {
			var old []struct {
				RestaurantID string
				BusinessDate time.Time
			}
			if err := tx.Model(&paymentSource{}).Select("restaurant_id::text AS restaurant_id, business_date").
				Where("(restaurant_id, source_kind, source_record_id) IN ?", chunk).Scan(&old).Error; err != nil {
				return err
			}
			for _, o := range old {
				touched[dayKey{o.RestaurantID, bizdate.FromTime(o.BusinessDate)}] = true
			}
		}
		days := make([]dayKey, 0, len(touched))
		for k := range touched {
			days = append(days, k)
		}
		slices.SortFunc(days, func(a, b dayKey) int {
			if c := strings.Compare(a.restaurant, b.restaurant); c != 0 {
				return c
			}
			return strings.Compare(a.date.String(), b.date.String())
		})
		for _, k := range days {
			if err := lockDay(tx, k.restaurant, k.date); err != nil {
				return err
			}
		}
		if len(sources) > 0 {
			if err := tx.Clauses(clause.OnConflict{
				Columns:   []clause.Column{{Name: "restaurant_id"}, {Name: "source_kind"}, {Name: "source_record_id"}},
				DoUpdates: clause.AssignmentColumns(sourceUpdateColumns),
				Where:     clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: "payment_sources.fingerprint <> EXCLUDED.fingerprint"}}},
			}).CreateInBatches(sources, upsertBatch).Error; err != nil {
				return err
			}
		}
		if err := rebuildDayTotals(tx, days); err != nil {
			return err
		}
		if len(refunds) == 0 {
			return nil
		}
		known, err := knownRefunds(tx, refunds)
		if err != nil {
			return err
		}
		if err := tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "restaurant_id"}, {Name: "refund_id"}},
			DoUpdates: clause.AssignmentColumns(refundUpdateColumns),
			Where:     clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: "refund_events.fingerprint <> EXCLUDED.fingerprint"}}},
		}).CreateInBatches(refunds, upsertBatch).Error; err != nil {
			return err
		}
		return recordNewRefunds(tx, b.Refunds, known)
	})
}

// knownRefunds returns the (restaurant, refund id) pairs of refunds already
// stored before this ingestion.
func knownRefunds(tx *gorm.DB, refunds []refundEvent) (map[[2]string]bool, error) {
	known := map[[2]string]bool{}
	for chunk := range slices.Chunk(refunds, upsertBatch) {
		keys := make([][]any, len(chunk))
		for i, r := range chunk {
			keys[i] = []any{r.RestaurantID, r.RefundID}
		}
		var rows []struct{ RestaurantID, RefundID string }
		if err := tx.Model(&refundEvent{}).Select("restaurant_id::text AS restaurant_id, refund_id").
			Where("(restaurant_id, refund_id) IN ?", keys).Scan(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			known[[2]string{strings.ToLower(r.RestaurantID), r.RefundID}] = true
		}
	}
	return known, nil
}

// recordNewRefunds records the Recorded event of every refund event this
// ingestion stored first (an update of a known one records nothing),
// in input order, the batch's last state of each; the last step of the
// transaction.
func recordNewRefunds(tx *gorm.DB, ws []domain.RefundWrite, known map[[2]string]bool) error {
	last := map[[2]string]int{}
	for i, w := range ws {
		last[[2]string{strings.ToLower(w.RestaurantID), w.Event.ID}] = i
	}
	var events []outbox.Event
	for i, w := range ws {
		k := [2]string{strings.ToLower(w.RestaurantID), w.Event.ID}
		if known[k] || last[k] != i {
			continue
		}
		e := w.Recorded()
		events = append(events, outbox.Event{Type: e.Type, RestaurantID: e.RestaurantID, Data: e.Data})
	}
	return outbox.Record(tx, events...)
}

var sourceUpdateColumns = []string{"receipt_hash", "parent_receipt_hash", "component_id", "tab_split_id", "source_group_id",
	"order_ids", "occurred_at", "business_date", "method_key", "gross_minor", "vat_minor", "transaction_count", "vat_known",
	"gross_zero", "gross_special", "gross_reduced", "gross_standard", "gross_unknown",
	"vat_zero", "vat_special", "vat_reduced", "vat_standard", "vat_unknown", "discount_minor", "tip_minor", "fingerprint", "updated_at"}

var refundUpdateColumns = []string{"kind", "occurred_at", "refund_business_date", "order_id", "original_business_date",
	"method_key", "amount_minor", "returned_lines", "impact_gross_minor", "impact_net_minor", "impact_vat_minor",
	"impact_vat_by_rate", "legacy_timing", "fingerprint"}

// sourceRows gives the batch its rows; a key sent twice in one batch keeps
// its last line (one INSERT cannot update a row twice).
func sourceRows(ws []domain.SourceWrite) []paymentSource {
	at := map[[3]string]int{}
	out := make([]paymentSource, 0, len(ws))
	now := time.Now().UTC()
	for _, w := range ws {
		s, a := w.Source, w.Source.Amounts
		row := paymentSource{RestaurantID: w.RestaurantID, SourceKind: s.Kind, SourceRecordID: s.RecordID, ReceiptHash: s.ReceiptHash,
			ParentReceiptHash: s.ParentReceiptHash, ComponentID: s.ComponentID, TabSplitID: s.TabSplitID, SourceGroupID: s.GroupID,
			OrderIDs: textArray(s.OrderIDs), OccurredAt: s.OccurredAt, BusinessDate: s.BusinessDate.String(), MethodKey: s.Method,
			GrossMinor: a.Gross, VatMinor: a.Vat, TransactionCount: a.Count, VatKnown: s.VatKnown,
			GrossZero: a.GrossByRate.Zero, GrossSpecial: a.GrossByRate.Special, GrossReduced: a.GrossByRate.Reduced,
			GrossStandard: a.GrossByRate.Standard, GrossUnknown: a.GrossByRate.Unknown,
			VatZero: a.VatByRate.Zero, VatSpecial: a.VatByRate.Special, VatReduced: a.VatByRate.Reduced,
			VatStandard: a.VatByRate.Standard, VatUnknown: a.VatByRate.Unknown,
			DiscountMinor: s.Discount, TipMinor: s.Tip, Fingerprint: s.Fingerprint, UpdatedAt: now}
		k := [3]string{w.RestaurantID, s.Kind, s.RecordID}
		if i, ok := at[k]; ok {
			out[i] = row
			continue
		}
		at[k] = len(out)
		out = append(out, row)
	}
	return out
}

func refundRows(ws []domain.RefundWrite) ([]refundEvent, error) {
	at := map[[2]string]int{}
	out := make([]refundEvent, 0, len(ws))
	for _, w := range ws {
		row, err := refundEventRow(w)
		if err != nil {
			return nil, err
		}
		k := [2]string{w.RestaurantID, w.Event.ID}
		if i, ok := at[k]; ok {
			out[i] = row
			continue
		}
		at[k] = len(out)
		out = append(out, row)
	}
	return out, nil
}

func refundEventRow(w domain.RefundWrite) (refundEvent, error) {
	e := w.Event
	lines, err := json.Marshal(e.ReturnedLines)
	if err != nil {
		return refundEvent{}, err
	}
	row := refundEvent{RestaurantID: w.RestaurantID, RefundID: e.ID, Kind: e.Kind, OccurredAt: e.OccurredAt,
		RefundBusinessDate: e.BusinessDate.String(), OrderID: e.OrderID, MethodKey: e.Method, AmountMinor: e.Amount,
		ReturnedLines: string(lines), LegacyTiming: e.LegacyTiming, Fingerprint: e.Fingerprint}
	if e.OriginalBusinessDate != nil {
		d := e.OriginalBusinessDate.String()
		row.OriginalBusinessDate = &d
	}
	if im := e.Impact; im != nil {
		raw, _ := json.Marshal(im.VatByRateMinor)
		rates := string(raw)
		row.ImpactGrossMinor, row.ImpactNetMinor, row.ImpactVatMinor, row.ImpactVatByRate = &im.GrossMinor, &im.NetMinor, &im.VatMinor, &rates
	}
	return row, nil
}

// textArray writes a Postgres text[] literal.
func textArray(v []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// rebuildDays are the statements rebuilding the totals of a set of days: %[1]s
// is a relation of (restaurant_id uuid, business_date date), used once per
// statement. A day left without sources keeps a state row with zero counts.
var rebuildDays = []string{
	`DELETE FROM daily_method_totals t USING %[1]s d WHERE t.restaurant_id = d.restaurant_id AND t.business_date = d.business_date`,
	`INSERT INTO daily_method_totals
SELECT p.restaurant_id, p.business_date, p.method_key, sum(p.gross_minor), sum(p.vat_minor), sum(p.transaction_count),
  sum(p.gross_zero), sum(p.gross_special), sum(p.gross_reduced), sum(p.gross_standard), sum(p.gross_unknown),
  sum(p.vat_zero), sum(p.vat_special), sum(p.vat_reduced), sum(p.vat_standard), sum(p.vat_unknown), sum(p.discount_minor), sum(p.tip_minor)
FROM %[1]s d JOIN payment_sources p ON p.restaurant_id = d.restaurant_id AND p.business_date = d.business_date
GROUP BY p.restaurant_id, p.business_date, p.method_key`,
	`INSERT INTO daily_source_state (restaurant_id, business_date, source_count, unknown_vat_count, fingerprint)
SELECT d.restaurant_id, d.business_date, count(p.source_kind), count(*) FILTER (WHERE NOT p.vat_known),
  coalesce(encode(sha256(convert_to(string_agg(p.source_kind || ':' || p.source_record_id || '=' || p.fingerprint, ',' ORDER BY p.source_kind, p.source_record_id), 'UTF8')), 'hex'), '')
FROM %[1]s d LEFT JOIN payment_sources p ON p.restaurant_id = d.restaurant_id AND p.business_date = d.business_date
GROUP BY d.restaurant_id, d.business_date
ON CONFLICT (restaurant_id, business_date) DO UPDATE SET source_count = EXCLUDED.source_count,
  unknown_vat_count = EXCLUDED.unknown_vat_count, fingerprint = EXCLUDED.fingerprint`,
}

// rebuildDayTotals rebuilds the totals of days in three statements.
func rebuildDayTotals(tx *gorm.DB, days []dayKey) error {
	if len(days) == 0 {
		return nil
	}
	restaurants, dates := make([]string, len(days)), make([]string, len(days))
	for i, k := range days {
		restaurants[i], dates[i] = k.restaurant, k.date.String()
	}
	// Array literals: gorm would expand a slice argument into a list.
	const rel = `(SELECT * FROM unnest(?::uuid[], ?::date[]) AS u(restaurant_id, business_date))`
	for _, q := range rebuildDays {
		if err := tx.Exec(fmt.Sprintf(q, rel), textArray(restaurants), textArray(dates)).Error; err != nil {
			return err
		}
	}
	return nil
}

type totalsRow struct {
	BusinessDate                                                       time.Time
	MethodKey                                                          string
	GrossMinor, VatMinor, TransactionCount                             int64
	GrossZero, GrossSpecial, GrossReduced, GrossStandard, GrossUnknown int64
	VatZero, VatSpecial, VatReduced, VatStandard, VatUnknown           int64
	DiscountMinor, TipMinor                                            int64
}

type stateRow struct {
	BusinessDate    time.Time
	SourceCount     int
	UnknownVatCount int
	Fingerprint     string
}

// DayTotals reads the per-day totals of a period (days with sources only).
func (s *Store) DayTotals(ctx context.Context, restaurant string, start, end bizdate.Date) ([]domain.DayTotals, error) {
	return s.r(ctx).DayTotals(ctx, restaurant, start, end)
}

func (r reader) DayTotals(_ context.Context, restaurant string, start, end bizdate.Date) ([]domain.DayTotals, error) {
	var states []stateRow
	if err := r.db.Raw(`SELECT business_date, source_count, unknown_vat_count, fingerprint FROM daily_source_state
WHERE restaurant_id = ? AND business_date BETWEEN ?::date AND ?::date AND source_count > 0 ORDER BY business_date`,
		restaurant, start.String(), end.String()).Scan(&states).Error; err != nil {
		return nil, err
	}
	var rows []totalsRow
	if err := r.db.Raw(`SELECT * FROM daily_method_totals WHERE restaurant_id = ? AND business_date BETWEEN ?::date AND ?::date
ORDER BY business_date, method_key`, restaurant, start.String(), end.String()).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]domain.DayTotals, 0, len(states))
	idx := map[bizdate.Date]int{}
	for _, st := range states {
		d := bizdate.FromTime(st.BusinessDate)
		idx[d] = len(out)
		out = append(out, domain.DayTotals{Date: d, SourceCount: st.SourceCount, UnknownVat: st.UnknownVatCount, Fingerprint: st.Fingerprint})
	}
	for _, t := range rows {
		i, ok := idx[bizdate.FromTime(t.BusinessDate)]
		if !ok {
			continue
		}
		out[i].Methods = append(out[i].Methods, domain.MethodTotals{Method: t.MethodKey, Discount: t.DiscountMinor, Tip: t.TipMinor,
			Amounts: domain.Amounts{Gross: t.GrossMinor, Vat: t.VatMinor, Count: t.TransactionCount,
				GrossByRate: domain.RateAmounts{Zero: t.GrossZero, Special: t.GrossSpecial, Reduced: t.GrossReduced, Standard: t.GrossStandard, Unknown: t.GrossUnknown},
				VatByRate:   domain.RateAmounts{Zero: t.VatZero, Special: t.VatSpecial, Reduced: t.VatReduced, Standard: t.VatStandard, Unknown: t.VatUnknown}}})
	}
	return out, nil
}

type ledgerRow struct {
	CorrectionID, BatchID, RevisionID, RestaurantID string
	BusinessDate                                    time.Time
	Action, SourceKind, SourceRecordID              string
	FromMethodKey, ToMethodKey                      string
	GrossMinor, VatMinor                            int64
	TransactionCount                                int64
	GrossByRate, VatByRate                          string
	SourceFingerprint, Reason                       string
	UndoesCorrectionID                              *string
	CreatedAt                                       time.Time
}

// Ledger reads the ledger rows of a period, oldest first.
func (s *Store) Ledger(ctx context.Context, restaurant string, start, end bizdate.Date) ([]domain.Correction, error) {
	return s.r(ctx).Ledger(ctx, restaurant, start, end)
}

func (r reader) Ledger(_ context.Context, restaurant string, start, end bizdate.Date) ([]domain.Correction, error) {
	var rows []ledgerRow
	if err := r.db.Raw(`SELECT correction_id::text, batch_id::text, revision_id::text, restaurant_id::text, business_date, action,
  source_kind, source_record_id, from_method_key, to_method_key, gross_minor, vat_minor, transaction_count,
  gross_by_rate::text AS gross_by_rate, vat_by_rate::text AS vat_by_rate, source_fingerprint, reason,
  undoes_correction_id::text, created_at
FROM correction_ledger WHERE restaurant_id = ? AND business_date BETWEEN ?::date AND ?::date
ORDER BY business_date, position`, restaurant, start.String(), end.String()).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]domain.Correction, len(rows))
	for i, row := range rows {
		c := domain.Correction{ID: row.CorrectionID, BatchID: row.BatchID, RevisionID: row.RevisionID, RestaurantID: row.RestaurantID,
			Date: bizdate.FromTime(row.BusinessDate), Action: row.Action, SourceKind: row.SourceKind, SourceRecordID: row.SourceRecordID,
			From: row.FromMethodKey, To: row.ToMethodKey, SourceFingerprint: row.SourceFingerprint, Reason: row.Reason,
			Undoes: row.UndoesCorrectionID, CreatedAt: row.CreatedAt.UTC(),
			Moved: domain.Amounts{Gross: row.GrossMinor, Vat: row.VatMinor, Count: row.TransactionCount}}
		_ = json.Unmarshal([]byte(row.GrossByRate), &c.Moved.GrossByRate)
		_ = json.Unmarshal([]byte(row.VatByRate), &c.Moved.VatByRate)
		out[i] = c
	}
	return out, nil
}

type sourceRow struct {
	SourceKind, SourceRecordID, ReceiptHash                            string
	ParentReceiptHash, ComponentID, TabSplitID, SourceGroupID          *string
	GroupGross                                                         *int64
	OrderIDs                                                           string
	OccurredAt, BusinessDate                                           time.Time
	MethodKey                                                          string
	GrossMinor, VatMinor, TransactionCount                             int64
	VatKnown                                                           bool
	GrossZero, GrossSpecial, GrossReduced, GrossStandard, GrossUnknown int64
	VatZero, VatSpecial, VatReduced, VatStandard, VatUnknown           int64
	DiscountMinor, TipMinor                                            int64
	Fingerprint                                                        string
}

const sourceSelect = `SELECT s.source_kind, s.source_record_id, s.receipt_hash, s.parent_receipt_hash, s.component_id, s.tab_split_id,
  s.source_group_id, (SELECT sum(g.gross_minor) FROM payment_sources g WHERE g.restaurant_id = s.restaurant_id AND g.source_group_id = s.source_group_id) AS group_gross,
  array_to_json(s.order_ids)::text AS order_ids, s.occurred_at, s.business_date, s.method_key, s.gross_minor, s.vat_minor,
  s.transaction_count, s.vat_known, s.gross_zero, s.gross_special, s.gross_reduced, s.gross_standard, s.gross_unknown,
  s.vat_zero, s.vat_special, s.vat_reduced, s.vat_standard, s.vat_unknown, s.discount_minor, s.tip_minor, s.fingerprint
FROM payment_sources s `

func (row sourceRow) source() domain.Source {
	s := domain.Source{Kind: row.SourceKind, RecordID: row.SourceRecordID, ReceiptHash: row.ReceiptHash,
		ParentReceiptHash: row.ParentReceiptHash, ComponentID: row.ComponentID, TabSplitID: row.TabSplitID,
		GroupID: row.SourceGroupID, GroupGross: row.GroupGross, OccurredAt: row.OccurredAt.UTC(),
		BusinessDate: bizdate.FromTime(row.BusinessDate), Method: row.MethodKey, VatKnown: row.VatKnown,
		Discount: row.DiscountMinor, Tip: row.TipMinor, Fingerprint: row.Fingerprint,
		Amounts: domain.Amounts{Gross: row.GrossMinor, Vat: row.VatMinor, Count: row.TransactionCount,
			GrossByRate: domain.RateAmounts{Zero: row.GrossZero, Special: row.GrossSpecial, Reduced: row.GrossReduced, Standard: row.GrossStandard, Unknown: row.GrossUnknown},
			VatByRate:   domain.RateAmounts{Zero: row.VatZero, Special: row.VatSpecial, Reduced: row.VatReduced, Standard: row.VatStandard, Unknown: row.VatUnknown}}}
	_ = json.Unmarshal([]byte(row.OrderIDs), &s.OrderIDs)
	if s.GroupID == nil {
		s.GroupGross = nil
	}
	return s
}

func sources(rows []sourceRow) []domain.Source {
	out := make([]domain.Source, len(rows))
	for i, r := range rows {
		out[i] = r.source()
	}
	return out
}

// SourcesByKey reads the current state of sources by "<kind>:<id>" key.
func (s *Store) SourcesByKey(ctx context.Context, restaurant string, keys []string) ([]domain.Source, error) {
	return s.r(ctx).SourcesByKey(ctx, restaurant, keys)
}

func (r reader) SourcesByKey(_ context.Context, restaurant string, keys []string) ([]domain.Source, error) {
	pairs := make([][]any, 0, len(keys))
	for _, k := range keys {
		kind, id, _ := strings.Cut(k, ":")
		pairs = append(pairs, []any{kind, id})
	}
	var rows []sourceRow
	// (kind, id) pairs, so the primary key finds each row.
	err := r.db.Raw(sourceSelect+`WHERE s.restaurant_id = ? AND (s.source_kind, s.source_record_id) IN ?
ORDER BY s.business_date, s.source_kind, s.source_record_id`, restaurant, pairs).Scan(&rows).Error
	return sources(rows), err
}

// Source reads one source; domain.ErrNotFound when there is none.
func (s *Store) Source(ctx context.Context, restaurant, kind, recordID string) (domain.Source, error) {
	return s.r(ctx).Source(ctx, restaurant, kind, recordID)
}

func (r reader) Source(_ context.Context, restaurant, kind, recordID string) (domain.Source, error) {
	var rows []sourceRow
	if err := r.db.Raw(sourceSelect+`WHERE s.restaurant_id = ? AND s.source_kind = ? AND s.source_record_id = ?`,
		restaurant, kind, recordID).Scan(&rows).Error; err != nil {
		return domain.Source{}, err
	}
	if len(rows) == 0 {
		return domain.Source{}, domain.ErrNotFound
	}
	return rows[0].source(), nil
}

// Revision reads a day's revision (the initial one before any write).
func (s *Store) Revision(ctx context.Context, restaurant string, date bizdate.Date) (string, error) {
	return s.r(ctx).Revision(ctx, restaurant, date)
}

func (r reader) Revision(_ context.Context, restaurant string, date bizdate.Date) (string, error) {
	var revs []string
	if err := r.db.Raw(`SELECT revision_id::text FROM day_revisions WHERE restaurant_id = ? AND business_date = ?::date`,
		restaurant, date.String()).Scan(&revs).Error; err != nil {
		return "", err
	}
	if len(revs) == 0 {
		return domain.InitialRevision(restaurant, date), nil
	}
	return revs[0], nil
}

// RefundFlags tells whether the period's refund events have legacy timing
// or refunds of unknown impact.
func (s *Store) RefundFlags(ctx context.Context, restaurant string, start, end bizdate.Date) (domain.RefundFlags, error) {
	return s.r(ctx).RefundFlags(ctx, restaurant, start, end)
}

func (r reader) RefundFlags(_ context.Context, restaurant string, start, end bizdate.Date) (domain.RefundFlags, error) {
	var row struct{ Legacy, Incomplete bool }
	err := r.db.Raw(`SELECT coalesce(bool_or(legacy_timing), false) AS legacy,
  coalesce(bool_or(kind = 'refund' AND impact_gross_minor IS NULL), false) AS incomplete
FROM refund_events WHERE restaurant_id = ? AND refund_business_date BETWEEN ?::date AND ?::date`,
		restaurant, start.String(), end.String()).Scan(&row).Error
	return domain.RefundFlags{Legacy: row.Legacy, Incomplete: row.Incomplete}, err
}

type refundRow struct {
	RefundID             string
	Kind                 string
	OccurredAt           time.Time
	RefundBusinessDate   time.Time
	OrderID              *string
	OriginalBusinessDate *time.Time
	MethodKey            string
	AmountMinor          int64
	ReturnedLines        string
	ImpactGrossMinor     *int64
	ImpactNetMinor       *int64
	ImpactVatMinor       *int64
	ImpactVatByRate      *string
	LegacyTiming         bool
	Fingerprint          string
}

// Refunds reads refund events in (refund business date, occurred at, id)
// order after the filter's position.
func (s *Store) Refunds(ctx context.Context, f domain.RefundFilter) ([]domain.RefundEvent, error) {
	q := s.readDB(ctx).Table("refund_events").
		Select("refund_id, kind, occurred_at, refund_business_date, order_id, original_business_date, method_key, amount_minor, returned_lines::text AS returned_lines, impact_gross_minor, impact_net_minor, impact_vat_minor, impact_vat_by_rate::text AS impact_vat_by_rate, legacy_timing, fingerprint").
		Where("restaurant_id = ? AND refund_business_date BETWEEN ?::date AND ?::date", f.RestaurantID, f.Start.String(), f.End.String())
	if f.OrderID != nil {
		q = q.Where("order_id = ?", *f.OrderID)
	}
	if f.After != nil {
		q = q.Where("(refund_business_date, occurred_at, refund_id) > (?::date, ?, ?)", f.After.Date.String(), f.After.OccurredAt, f.After.ID)
	}
	var rows []refundRow
	if err := q.Order("refund_business_date, occurred_at, refund_id").Limit(f.Limit).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]domain.RefundEvent, len(rows))
	for i, r := range rows {
		e := domain.RefundEvent{ID: r.RefundID, Kind: r.Kind, OccurredAt: r.OccurredAt.UTC(), BusinessDate: bizdate.FromTime(r.RefundBusinessDate),
			OrderID: r.OrderID, Method: r.MethodKey, Amount: r.AmountMinor, LegacyTiming: r.LegacyTiming, Fingerprint: r.Fingerprint}
		if r.OriginalBusinessDate != nil {
			d := bizdate.FromTime(*r.OriginalBusinessDate)
			e.OriginalBusinessDate = &d
		}
		_ = json.Unmarshal([]byte(r.ReturnedLines), &e.ReturnedLines)
		if r.ImpactGrossMinor != nil {
			im := &contracts.AccountingImpact{GrossMinor: *r.ImpactGrossMinor, NetMinor: *r.ImpactNetMinor, VatMinor: *r.ImpactVatMinor}
			if r.ImpactVatByRate != nil {
				_ = json.Unmarshal([]byte(*r.ImpactVatByRate), &im.VatByRateMinor)
			}
			e.Impact = im
		}
		out[i] = e
	}
	return out, nil
}

// RefundTotals sums the period's refund events per refund business date and
// kind.
func (s *Store) RefundTotals(ctx context.Context, restaurant string, start, end bizdate.Date) ([]domain.RefundTotals, error) {
	return s.r(ctx).RefundTotals(ctx, restaurant, start, end)
}

func (r reader) RefundTotals(_ context.Context, restaurant string, start, end bizdate.Date) ([]domain.RefundTotals, error) {
	var rows []struct {
		RefundBusinessDate                      time.Time
		Kind                                    string
		Count, Amount, Gross, Net, Vat, Unknown int64
	}
	err := r.db.Raw(`SELECT refund_business_date, kind, count(*) AS count, sum(amount_minor) AS amount,
  coalesce(sum(impact_gross_minor), 0) AS gross, coalesce(sum(impact_net_minor), 0) AS net, coalesce(sum(impact_vat_minor), 0) AS vat,
  count(*) FILTER (WHERE kind = 'refund' AND impact_gross_minor IS NULL) AS unknown
FROM refund_events WHERE restaurant_id = ? AND refund_business_date BETWEEN ?::date AND ?::date
GROUP BY refund_business_date, kind ORDER BY refund_business_date, kind`, restaurant, start.String(), end.String()).Scan(&rows).Error
	out := make([]domain.RefundTotals, len(rows))
	for i, r := range rows {
		out[i] = domain.RefundTotals{Date: bizdate.FromTime(r.RefundBusinessDate), Kind: r.Kind, Count: r.Count, Amount: r.Amount,
			ImpactGross: r.Gross, ImpactNet: r.Net, ImpactVat: r.Vat, UnknownImpact: r.Unknown}
	}
	return out, err
}

// WorkspaceSources lists up to limit sources of the period; a query matches
// exactly a receipt hash, record id, order id, tab-split id or group id.
// One statement: the page is a range scan of payment_sources_day cut at the
// limit, and its groups' gross sums are computed once per group of the page
// (not once per source).
func (s *Store) WorkspaceSources(ctx context.Context, restaurant string, start, end bizdate.Date, query string, limit int) ([]domain.Source, error) {
	page := `SELECT * FROM payment_sources WHERE restaurant_id = @restaurant AND business_date BETWEEN CAST(@first AS date) AND CAST(@last AS date)`
	args := map[string]any{"restaurant": restaurant, "first": start.String(), "last": end.String(), "limit": limit}
	if query != "" {
		page += ` AND (receipt_hash = @query OR source_record_id = @query OR tab_split_id = @query OR source_group_id = @query OR @query = ANY(order_ids))`
		args["query"] = query
	}
	page += ` ORDER BY business_date, source_kind, source_record_id LIMIT @limit`
	sql := `WITH page AS MATERIALIZED (` + page + `),
groups AS (SELECT g.source_group_id, sum(g.gross_minor) AS gross FROM payment_sources g
  WHERE g.restaurant_id = @restaurant AND g.source_group_id IN (SELECT source_group_id FROM page WHERE source_group_id IS NOT NULL)
  GROUP BY g.source_group_id)
SELECT s.source_kind, s.source_record_id, s.receipt_hash, s.parent_receipt_hash, s.component_id, s.tab_split_id,
  s.source_group_id, gr.gross AS group_gross, array_to_json(s.order_ids)::text AS order_ids, s.occurred_at, s.business_date,
  s.method_key, s.gross_minor, s.vat_minor, s.transaction_count, s.vat_known, s.gross_zero, s.gross_special, s.gross_reduced,
  s.gross_standard, s.gross_unknown, s.vat_zero, s.vat_special, s.vat_reduced, s.vat_standard, s.vat_unknown,
  s.discount_minor, s.tip_minor, s.fingerprint
FROM page s LEFT JOIN groups gr ON gr.source_group_id = s.source_group_id
ORDER BY s.business_date, s.source_kind, s.source_record_id`
	var rows []sourceRow
	err := s.readDB(ctx).Raw(sql, args).Scan(&rows).Error
	return sources(rows), err
}

// errKeyReused is an idempotency key sent again with another body.
var errKeyReused = fault.New(fault.Conflict, "This idempotencyKey was already used with a different request; use a new key for a new request.")

type dayWriter struct {
	reader
	tx *gorm.DB
}

// Append writes the ledger row and moves the day's revision.
func (w dayWriter) Append(_ context.Context, c domain.Correction) error {
	gr, _ := json.Marshal(c.Moved.GrossByRate)
	vr, _ := json.Marshal(c.Moved.VatByRate)
	if err := w.tx.Exec(`INSERT INTO correction_ledger (correction_id, batch_id, revision_id, restaurant_id, business_date, action,
  source_kind, source_record_id, from_method_key, to_method_key, gross_minor, vat_minor, transaction_count, gross_by_rate,
  vat_by_rate, source_fingerprint, reason, undoes_correction_id, created_at)
VALUES (?, ?, ?, ?, ?::date, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?)`,
		c.ID, c.BatchID, c.RevisionID, c.RestaurantID, c.Date.String(), c.Action, c.SourceKind, c.SourceRecordID, c.From, c.To,
		c.Moved.Gross, c.Moved.Vat, c.Moved.Count, string(gr), string(vr), c.SourceFingerprint, c.Reason, c.Undoes, c.CreatedAt).Error; err != nil {
		return err
	}
	return w.tx.Exec(`INSERT INTO day_revisions (restaurant_id, business_date, revision_id) VALUES (?, ?::date, ?)
ON CONFLICT (restaurant_id, business_date) DO UPDATE SET revision_id = EXCLUDED.revision_id`, c.RestaurantID, c.Date.String(), c.RevisionID).Error
}

// Record writes e into the outbox in the write's transaction.
func (w dayWriter) Record(_ context.Context, e domain.Event) error {
	return outbox.Record(w.tx, outbox.Event{Type: e.Type, RestaurantID: e.RestaurantID, Data: e.Data})
}

// WriteDay runs write in one transaction with the idempotency record, after
// taking the day lock.
// Snapshot runs read against one moment of the data: a read-only
// REPEATABLE READ transaction, so that a report's totals, ledger and sources
// agree with each other while ingestion and corrections commit between its
// statements. It is rolled back at the end: it wrote nothing, and a read
// that failed inside it (a ledger a report is answered without) must not
// turn into a failed commit.
func (s *Store) Snapshot(ctx context.Context, read func(domain.Reader) error) error {
	tx := s.readDB(ctx).Begin(&sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if tx.Error != nil {
		return tx.Error
	}
	defer tx.Rollback()
	return read(reader{tx})
}

func (s *Store) WriteDay(ctx context.Context, req domain.WriteRequest, restaurant string, date bizdate.Date, write func(domain.DayWriter) (any, error)) (domain.WriteResult, error) {
	res, err := idempotency.Run(ctx, s.DB, idempotency.Request{Scope: req.Scope, Key: req.Key, Body: req.Body}, func(tx *gorm.DB) (int, any, error) {
		if err := lockDay(tx, restaurant, date); err != nil {
			return 0, nil, err
		}
		data, err := write(dayWriter{reader: reader{tx}, tx: tx})
		return 200, data, err
	})
	if errors.Is(err, idempotency.ErrKeyReused) {
		return domain.WriteResult{}, errKeyReused
	}
	if err != nil {
		return domain.WriteResult{}, err
	}
	return domain.WriteResult{Data: res.Data, Replayed: res.Replayed}, nil
}
