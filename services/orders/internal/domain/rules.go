package domain

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"partnerapi.dev/pkg/bizdate"
)

// Record rules: each check returns "" or the rule the value breaks, and each
// part of a record returns the path of its first bad field with the rule, so
// a message reads "lines[0].quantity: must be ≥ 0". Nothing is formatted for
// a valid record (the import checks millions).

// Values a record may hold.
var (
	TaxEvidences         = []string{"snapshot", "legacy", "unknown"}
	VatCategories        = []string{"zero", "special", "reduced", "standard", "unknown"}
	OriginKinds          = []string{"pos", "online", "marketplace"}
	VatAllocationMethods = []string{VatAllocationStored}
	Statuses             = []string{StatusPaid, StatusPartiallyRefunded, StatusRefunded, StatusVoided}
)

// VatAllocationStored: VAT per line and per rate as the till recorded it.
const VatAllocationStored = "stored"

// Bounds of record values. Counts and rates are Postgres integers; dates stay
// within four-digit years, so a business date is always YYYY-MM-DD.
const (
	MaxTextLength = 255 // ids, references, categories
	MaxNameLength = 500 // line and option names
	MaxRateBps    = 10000
	MaxCount      = math.MaxInt32
)

var (
	earliestDate    = bizdate.Date{Year: 1970, Month: time.January, Day: 1}
	latestDate      = bizdate.Date{Year: 9999, Month: time.December, Day: 31}
	earliestInstant = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	// latestInstant is excluded: a later instant may fall on a business
	// date in year 10000 in a zone east of UTC.
	latestInstant = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
)

// ValidText reports whether s can be stored as text: valid UTF-8 without NUL.
func ValidText(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

const invalidText = "must be valid UTF-8 text without NUL characters"

func text(s string, min, max int) string {
	if !ValidText(s) {
		return invalidText
	}
	if n := utf8.RuneCountInString(s); n < min || n > max {
		if min == 1 {
			return fmt.Sprintf("must be 1 to %d characters", max)
		}
		return fmt.Sprintf("must be %d to %d characters", min, max)
	}
	return ""
}

// optText: null, or 1 to max characters.
func optText(s *string, max int) string {
	if s == nil {
		return ""
	}
	return text(*s, 1, max)
}

func oneOf(s string, allowed []string) string {
	for _, a := range allowed {
		if s == a {
			return ""
		}
	}
	return "must be one of " + strings.Join(allowed, ", ")
}

func atLeast(v, min int64) string {
	if v < min {
		return fmt.Sprintf("must be ≥ %d", min)
	}
	return ""
}

func minor(v int64) string { return atLeast(v, 0) }

func optMinor(v *int64) string {
	if v == nil {
		return ""
	}
	return minor(*v)
}

// between: min ≤ v ≤ max.
func between(v int, min, max int64) string {
	if int64(v) < min {
		return fmt.Sprintf("must be ≥ %d", min)
	}
	if int64(v) > max {
		return fmt.Sprintf("must be ≤ %d", max)
	}
	return ""
}

func count(v int) string { return between(v, 0, MaxCount) }

func code(s string, n int) string {
	if !isUpperCode(s, n) {
		return fmt.Sprintf("must be %d upper-case letters A-Z", n)
	}
	return ""
}

func key(s string) string {
	if !isKey(s) {
		return "must be a lower-case key of 1 to 64 characters (a-z, 0-9, _), starting with a letter"
	}
	return ""
}

func optKey(s *string) string {
	if s == nil {
		return ""
	}
	return key(*s)
}

func date(d *bizdate.Date) string {
	if d == nil {
		return "is required (YYYY-MM-DD)"
	}
	return optDate(d)
}

func optDate(d *bizdate.Date) string {
	if d != nil && (d.Before(earliestDate) || d.After(latestDate)) {
		return fmt.Sprintf("must be from %s to %s", earliestDate, latestDate)
	}
	return ""
}

func instant(t time.Time) string {
	if t.IsZero() {
		return "is required (RFC 3339 timestamp)"
	}
	if t.Before(earliestInstant) || !t.Before(latestInstant) {
		return fmt.Sprintf("must be from %s to before %s", earliestInstant.Format(time.RFC3339), latestInstant.Format(time.RFC3339))
	}
	return ""
}

// check is one field's result.
type check struct{ field, rule string }

func first(checks ...check) (string, string) {
	for _, c := range checks {
		if c.rule != "" {
			return c.field, c.rule
		}
	}
	return "", ""
}

// within prefixes a nested part's path with its place in the record.
func within(list string, i int, field, rule string) (string, string) {
	return fmt.Sprintf("%s[%d].%s", list, i, field), rule
}

// problem is the first field of the record that breaks a rule.
func (r *Record) problem() (string, string) {
	f, rule := first(
		check{"restaurantId", uuidRule(r.RestaurantID)},
		check{"timeZone", text(r.TimeZone, 1, 64)},
		check{"dayStartHour", dayStartHour(r.DayStartHour)},
		check{"currency", code(r.Currency, 3)},
		check{"country", code(r.Country, 2)},
		check{"orderId", text(r.OrderID, 1, MaxOrderIDLength)},
		check{"restaurantOrderNumber", atLeast(r.RestaurantOrderNumber, 1)},
		check{"receiptHash", text(r.ReceiptHash, 1, MaxTextLength)},
		check{"occurredAt", optInstant(r.OccurredAt)},
		check{"orderType", key(r.OrderType)},
		check{"tableNumber", optCount(r.TableNumber)},
		check{"status", oneOf(r.Status, Statuses)},
		check{"paymentMethod", oneOf(r.PaymentMethod, PaymentMethods)},
		check{"orderOrigin", required(r.OrderOrigin != nil)},
		check{"originalAmountMinor", minor(r.OriginalAmountMinor)},
		check{"totalAmountMinor", minor(r.TotalAmountMinor)},
		check{"vatMinor", minor(r.VatMinor)},
		check{"refundAmountMinor", minor(r.RefundAmountMinor)},
		check{"discountAmountMinor", minor(r.DiscountAmountMinor)},
		check{"grossSalesMinor", minor(r.GrossSalesMinor)},
		// netSalesMinor is whatever the till computed, negative included.
		check{"tipAmountMinor", minor(r.TipAmountMinor)},
		check{"vatAllocationMethod", optEnum(r.VatAllocationMethod, VatAllocationMethods)},
		check{"taxCountryCode", code(r.TaxCountryCode, 2)},
		check{"taxRatesAsOf", date(r.TaxRatesAsOf)},
	)
	if rule != "" {
		return f, rule
	}
	o := r.OrderOrigin
	if f, rule := first(check{"kind", oneOf(o.Kind, OriginKinds)}, check{"provider", optKey(o.Provider)}); rule != "" {
		return "orderOrigin." + f, rule
	}
	for i := range r.Lines {
		if f, rule := lineProblem(&r.Lines[i]); rule != "" {
			return within("lines", i, f, rule)
		}
	}
	for i := range r.VatRows {
		if f, rule := vatRowProblem(&r.VatRows[i]); rule != "" {
			return within("vatRows", i, f, rule)
		}
	}
	for i := range r.RefundedItems {
		if f, rule := refundedItemProblem(&r.RefundedItems[i]); rule != "" {
			return within("refundedItems", i, f, rule)
		}
	}
	for i := range r.PaymentReferences {
		if f, rule := paymentReferenceProblem(&r.PaymentReferences[i]); rule != "" {
			return within("paymentReferences", i, f, rule)
		}
	}
	return "", ""
}

func uuidRule(s string) string {
	if !IsUUID(s) {
		return "must be a UUID"
	}
	return ""
}

func dayStartHour(h *int) string {
	if h == nil {
		return "is required, 0 to 23"
	}
	return between(*h, 0, 23)
}

func optInstant(t *time.Time) string {
	if t == nil {
		return "is required (RFC 3339 timestamp)"
	}
	return instant(*t)
}

func optCount(v *int) string {
	if v == nil {
		return ""
	}
	return count(*v)
}

func optEnum(s string, allowed []string) string {
	if s == "" {
		return ""
	}
	return oneOf(s, allowed)
}

func required(ok bool) string {
	if !ok {
		return "is required"
	}
	return ""
}

func lineProblem(l *Line) (string, string) {
	f, rule := first(
		check{"lineId", text(l.LineID, 1, MaxTextLength)},
		check{"catalogItemId", optText(l.CatalogItemID, MaxTextLength)},
		check{"catalogItemKind", optText(l.CatalogItemKind, MaxTextLength)},
		check{"catalogCategoryId", optText(l.CatalogCategoryID, MaxTextLength)},
		check{"menuId", optText(l.MenuID, MaxTextLength)},
		check{"name", text(l.Name, 1, MaxNameLength)},
		check{"category", optText(l.Category, MaxTextLength)},
		check{"itemType", optText(l.ItemType, MaxTextLength)},
		check{"quantity", count(l.Quantity)},
		check{"unitPriceMinor", minor(l.UnitPriceMinor)},
		check{"originalUnitPriceMinor", optMinor(l.OriginalUnitPriceMinor)},
		check{"grossAmountMinor", minor(l.GrossAmountMinor)},
		check{"discountAmountMinor", minor(l.DiscountAmountMinor)},
		check{"vatAmountMinor", minor(l.VatAmountMinor)},
		check{"taxEvidence", oneOf(l.TaxEvidence, TaxEvidences)},
		check{"taxCountryCode", optCode(l.TaxCountryCode, 2)},
		check{"taxRatesAsOf", optDate(l.TaxRatesAsOf)},
	)
	if rule != "" {
		return f, rule
	}
	for i, v := range l.VatRates {
		if f, rule := first(
			check{"category", oneOf(v.Category, VatCategories)},
			check{"rateBps", between(v.RateBps, 0, MaxRateBps)},
			check{"vatAmountMinor", minor(v.VatAmountMinor)},
		); rule != "" {
			return within("vatRates", i, f, rule)
		}
	}
	for i, o := range l.SelectedOptions {
		if f, rule := first(
			check{"optionId", optText(o.OptionID, MaxTextLength)},
			check{"optionGroupId", optText(o.OptionGroupID, MaxTextLength)},
			check{"name", text(o.Name, 1, MaxNameLength)},
			check{"quantity", count(o.Quantity)},
			check{"unitPriceMinor", minor(o.UnitPriceMinor)},
			check{"grossAmountMinor", minor(o.GrossAmountMinor)},
			check{"vatAmountMinor", minor(o.VatAmountMinor)},
		); rule != "" {
			return within("selectedOptions", i, f, rule)
		}
	}
	return "", ""
}

func optCode(s *string, n int) string {
	if s == nil {
		return ""
	}
	return code(*s, n)
}

func vatRowProblem(v *VatRow) (string, string) {
	return first(
		check{"category", oneOf(v.Category, VatCategories)},
		check{"rateBps", between(v.RateBps, 0, MaxRateBps)},
		check{"grossAmountMinor", minor(v.GrossAmountMinor)},
		check{"netAmountMinor", minor(v.NetAmountMinor)},
		check{"vatAmountMinor", minor(v.VatAmountMinor)},
	)
}

func refundedItemProblem(ri *RefundedItem) (string, string) {
	return first(
		check{"lineId", optText(ri.LineID, MaxTextLength)},
		check{"catalogItemId", optText(ri.CatalogItemID, MaxTextLength)},
		check{"name", text(ri.Name, 1, MaxNameLength)},
		check{"quantity", count(ri.Quantity)},
		check{"amountMinor", minor(ri.AmountMinor)},
		check{"refundedAt", instant(ri.RefundedAt)},
	)
}

func paymentReferenceProblem(p *PaymentReference) (string, string) {
	return first(
		check{"provider", key(p.Provider)},
		check{"receiptHash", optText(p.ReceiptHash, MaxTextLength)},
		check{"checkoutId", optText(p.CheckoutID, MaxTextLength)},
		check{"transactionId", optText(p.TransactionID, MaxTextLength)},
		check{"transactionCode", optText(p.TransactionCode, MaxTextLength)},
		check{"sessionId", optText(p.SessionID, MaxTextLength)},
		check{"recordedAmountMinor", minor(p.RecordedAmountMinor)},
		check{"currency", code(p.Currency, 3)},
		check{"createdAt", instant(p.CreatedAt)},
	)
}
