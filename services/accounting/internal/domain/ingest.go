package domain

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/fault"
	"partnerapi.dev/services/contracts"
)

// MaxLine bounds one NDJSON line.
const MaxLine = 1 << 20

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// IsUUID reports whether s is a UUID.
func IsUUID(s string) bool { return uuidRe.MatchString(s) }

func invalid(format string, args ...any) error {
	return fault.New(fault.Invalid, fmt.Sprintf(format, args...))
}

var locations sync.Map

// Location loads a time zone once.
func Location(name string) (*time.Location, error) {
	if v, ok := locations.Load(name); ok {
		return v.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	locations.Store(name, loc)
	return loc, nil
}

// ParseBatch reads NDJSON AccountingRecord lines. A bad line fails the whole
// batch with its line number and field, so nothing of it is stored.
func ParseBatch(r io.Reader) (Batch, error) { return ParseLines(r, 1) }

// ParseLines is ParseBatch for lines numbered from first (an import reads a
// file in batches and names the file's line).
func ParseLines(r io.Reader, first int) (Batch, error) {
	var b Batch
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	n := first - 1
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := parseLine(line, &b); err != nil {
			return Batch{}, invalid("line %d: %s", n, err.Error())
		}
	}
	if err := sc.Err(); err != nil {
		return Batch{}, invalid("line %d: %s", n+1, "is not readable NDJSON (a line longer than 1 MiB?)")
	}
	return b, nil
}

func parseLine(line []byte, b *Batch) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var rec contracts.AccountingRecord
	if err := dec.Decode(&rec); err != nil {
		return fmt.Errorf("is not a valid record: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if !IsUUID(rec.RestaurantID) {
		return fmt.Errorf("field restaurantId must be a UUID")
	}
	loc, err := Location(rec.TimeZone)
	if err != nil {
		return fmt.Errorf("field timeZone: %s", err.Error())
	}
	if rec.DayStartHour == nil || *rec.DayStartHour < 0 || *rec.DayStartHour > 23 {
		return fmt.Errorf("field dayStartHour must be 0 to 23")
	}
	if len(rec.Currency) != 3 {
		return fmt.Errorf("field currency must be a 3-letter code")
	}
	restaurant := strings.ToLower(rec.RestaurantID)
	switch rec.Type {
	case contracts.AccountingRecordPaymentSource:
		if rec.PaymentSource == nil || rec.RefundEvent != nil {
			return fmt.Errorf("field paymentSource is required (and refundEvent not allowed) for type payment_source")
		}
		s, err := sourceOf(*rec.PaymentSource, loc, *rec.DayStartHour)
		if err != nil {
			return err
		}
		b.Sources = append(b.Sources, SourceWrite{RestaurantID: restaurant, Source: s})
	case contracts.AccountingRecordRefundEvent:
		if rec.RefundEvent == nil || rec.PaymentSource != nil {
			return fmt.Errorf("field refundEvent is required (and paymentSource not allowed) for type refund_event")
		}
		e, err := refundOf(*rec.RefundEvent, loc, *rec.DayStartHour)
		if err != nil {
			return err
		}
		b.Refunds = append(b.Refunds, RefundWrite{RestaurantID: restaurant, Event: e})
	default:
		return fmt.Errorf("field type must be payment_source or refund_event")
	}
	return nil
}

func text(field, v string, max int) error {
	if v == "" || len(v) > max {
		return fmt.Errorf("field %s must be 1 to %d characters", field, max)
	}
	return nil
}

func sourceOf(p contracts.PaymentSourceRecord, loc *time.Location, dsh int) (Source, error) {
	switch p.SourceKind {
	case contracts.SourceKindOrder, contracts.SourceKindTab, contracts.SourceKindTabSplit:
	default:
		return Source{}, fmt.Errorf("field paymentSource.sourceKind must be order, tab or tab-split")
	}
	if err := text("paymentSource.sourceRecordId", p.SourceRecordID, 255); err != nil {
		return Source{}, err
	}
	if err := text("paymentSource.receiptHash", p.ReceiptHash, 255); err != nil {
		return Source{}, err
	}
	if p.SourceKind == contracts.SourceKindTabSplit && (p.TabSplitID == nil || p.SourceGroupID == nil) {
		return Source{}, fmt.Errorf("field paymentSource.tabSplitId and sourceGroupId are required for a tab-split")
	}
	if len(p.OrderIDs) == 0 {
		return Source{}, fmt.Errorf("field paymentSource.orderIds must name the orders the payment settles")
	}
	for _, id := range p.OrderIDs {
		if err := text("paymentSource.orderIds[]", id, 255); err != nil {
			return Source{}, err
		}
	}
	if p.OccurredAt == nil {
		return Source{}, fmt.Errorf("field paymentSource.occurredAt is required")
	}
	if !KnownMethod(p.MethodKey) {
		return Source{}, fmt.Errorf("field paymentSource.methodKey %q is not a supported method", p.MethodKey)
	}
	if p.GrossMinor < 0 || p.VatMinor < 0 || p.VatMinor > p.GrossMinor {
		return Source{}, fmt.Errorf("field paymentSource.vatMinor must be between 0 and grossMinor (grossMinor >= 0)")
	}
	if p.TransactionCount < 0 {
		return Source{}, fmt.Errorf("field paymentSource.transactionCount must be >= 0")
	}
	if p.GrossByRateMinor.Sum() != p.GrossMinor {
		return Source{}, fmt.Errorf("field paymentSource.grossByRateMinor must sum to grossMinor")
	}
	if p.VatByRateMinor.Sum() != p.VatMinor {
		return Source{}, fmt.Errorf("field paymentSource.vatByRateMinor must sum to vatMinor")
	}
	known := false
	switch p.VatEvidence {
	case contracts.VatEvidenceKnown:
		known = true
		if p.GrossByRateMinor.Unknown != 0 || p.VatByRateMinor.Unknown != 0 {
			return Source{}, fmt.Errorf("field paymentSource.grossByRateMinor.unknown must be 0 with known VAT evidence")
		}
	case contracts.VatEvidenceUnknown:
	default:
		return Source{}, fmt.Errorf("field paymentSource.vatEvidence must be known or unknown")
	}
	if p.DiscountMinor < 0 || p.TipMinor < 0 {
		return Source{}, fmt.Errorf("field paymentSource.discountMinor and tipMinor must be >= 0")
	}
	s := Source{
		Kind: p.SourceKind, RecordID: p.SourceRecordID, ReceiptHash: p.ReceiptHash, ParentReceiptHash: p.ParentReceiptHash,
		ComponentID: p.ComponentID, TabSplitID: p.TabSplitID, GroupID: p.SourceGroupID, OrderIDs: p.OrderIDs,
		OccurredAt: p.OccurredAt.UTC(), BusinessDate: bizdate.Of(*p.OccurredAt, loc, dsh), Method: p.MethodKey,
		Amounts: Amounts{Gross: p.GrossMinor, Vat: p.VatMinor, Count: int64(p.TransactionCount),
			GrossByRate: p.GrossByRateMinor, VatByRate: p.VatByRateMinor},
		VatKnown: known, Discount: p.DiscountMinor, Tip: p.TipMinor,
	}
	s.Fingerprint = fingerprint(p, s.BusinessDate)
	return s, nil
}

func refundOf(p contracts.RefundEventRecord, loc *time.Location, dsh int) (RefundEvent, error) {
	if err := text("refundEvent.refundId", p.RefundID, 255); err != nil {
		return RefundEvent{}, err
	}
	switch p.Kind {
	case contracts.RefundKindRefund, contracts.RefundKindPendingReturn, contracts.RefundKindExtraCapture:
	default:
		return RefundEvent{}, fmt.Errorf("field refundEvent.kind must be refund, pending_payment_return or extra_capture_return")
	}
	if p.OccurredAt == nil {
		return RefundEvent{}, fmt.Errorf("field refundEvent.occurredAt is required")
	}
	if p.OrderID != nil {
		if err := text("refundEvent.orderId", *p.OrderID, 255); err != nil {
			return RefundEvent{}, err
		}
	}
	if !KnownMethod(p.MethodKey) {
		return RefundEvent{}, fmt.Errorf("field refundEvent.methodKey %q is not a supported method", p.MethodKey)
	}
	if p.AmountMinor <= 0 {
		return RefundEvent{}, fmt.Errorf("field refundEvent.amountMinor must be > 0 (the money returned by this event)")
	}
	if p.Kind != contracts.RefundKindRefund && p.AccountingImpact != nil {
		return RefundEvent{}, fmt.Errorf("field refundEvent.accountingImpact must be null for %s (no sale, no VAT)", p.Kind)
	}
	if im := p.AccountingImpact; im != nil {
		if im.GrossMinor != im.NetMinor+im.VatMinor || im.VatByRateMinor.Sum() != im.VatMinor || im.GrossMinor > 0 {
			return RefundEvent{}, fmt.Errorf("field refundEvent.accountingImpact must be signed (grossMinor <= 0) with grossMinor = netMinor + vatMinor and vatByRateMinor summing to vatMinor")
		}
	}
	lines := p.ReturnedLines
	if lines == nil {
		lines = []contracts.ReturnedLine{}
	}
	for _, l := range lines {
		if l.LineID == "" || l.Name == "" {
			return RefundEvent{}, fmt.Errorf("field refundEvent.returnedLines[].lineId and name are required")
		}
	}
	e := RefundEvent{ID: p.RefundID, Kind: p.Kind, OccurredAt: p.OccurredAt.UTC(), BusinessDate: bizdate.Of(*p.OccurredAt, loc, dsh),
		OrderID: p.OrderID, OriginalBusinessDate: p.OriginalBusinessDate, Method: p.MethodKey, Amount: p.AmountMinor,
		ReturnedLines: lines, Impact: p.AccountingImpact, LegacyTiming: p.LegacyTiming}
	e.Fingerprint = fingerprint(p, e.BusinessDate)
	return e, nil
}

// fingerprint is the hex SHA-256 of a record's JSON and its business date:
// equal content, equal fingerprint.
func fingerprint(v any, date bizdate.Date) string {
	raw, _ := json.Marshal(v)
	h := sha256.New()
	h.Write(raw)
	h.Write([]byte(date.String()))
	return hex.EncodeToString(h.Sum(nil))
}
