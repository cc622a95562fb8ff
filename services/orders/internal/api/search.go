package api

import (
	"math"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/services/orders/internal/domain"
)

// SearchParams are the query parameters order search accepts.
var SearchParams = []string{
	"organization_id", "start_date", "end_date", "order_id", "receipt_reference", "restaurant_order_number",
	"item_name", "payment_method", "status", "min_total_minor", "max_total_minor", "start_time", "end_time",
	"cursor", "limit",
}

// NonFilterParams do not narrow the search (they never need a date range).
var NonFilterParams = []string{"organization_id", "cursor", "limit", "order_id"}

var hhmm = regexp.MustCompile(`^([01][0-9]|2[0-3]):([0-5][0-9])$`)

// ParseSearch reads and validates the query of an order search for a restaurant whose
// business day starts at dayStartHour in loc. Every error names its parameter.
func ParseSearch(q url.Values, restaurantID string, loc *time.Location, dayStartHour int) (domain.SearchRequest, error) {
	switch k, repeated := httpx.AllowQuery(q, true, SearchParams...); {
	case repeated:
		return domain.SearchRequest{}, domain.Invalid(k, "Query parameter %q is given more than once; give it once.", k)
	case k != "":
		return domain.SearchRequest{}, domain.Invalid(k, "Query parameter %q is not supported by order search.", k)
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	get := func(k string) (string, bool) {
		v, ok := q[k]
		if !ok {
			return "", false
		}
		return v[0], true
	}
	f := domain.Filter{RestaurantID: restaurantID, Limit: domain.DefaultSearchLimit}
	req := domain.SearchRequest{}

	if v, ok := get("organization_id"); ok && !domain.IsUUID(v) {
		return req, domain.Invalid("organization_id", "organization_id must be a UUID.")
	}
	text := func(k string, max int) (*string, error) {
		v, ok := get(k)
		if !ok {
			return nil, nil
		}
		return &v, domain.TextParam(k, v, max)
	}
	integer := func(k string, min int64) (*int64, error) {
		v, ok := get(k)
		if !ok {
			return nil, nil
		}
		n, err := integerParam(k, v, min, math.MaxInt64)
		return &n, err
	}
	var err error
	if f.OrderID, err = text("order_id", domain.MaxOrderIDLength); err != nil {
		return req, err
	}
	if f.ReceiptReference, err = text("receipt_reference", domain.MaxReceiptRefLength); err != nil {
		return req, err
	}
	if f.ItemName, err = text("item_name", domain.MaxItemNameLength); err != nil {
		return req, err
	}
	if f.RestaurantOrderNumber, err = integer("restaurant_order_number", 1); err != nil {
		return req, err
	}
	if f.MinTotalMinor, err = integer("min_total_minor", 0); err != nil {
		return req, err
	}
	if f.MaxTotalMinor, err = integer("max_total_minor", 0); err != nil {
		return req, err
	}
	if f.MinTotalMinor != nil && f.MaxTotalMinor != nil && *f.MinTotalMinor > *f.MaxTotalMinor {
		return req, domain.Invalid("max_total_minor", "max_total_minor must not be less than min_total_minor.")
	}
	if v, ok := get("payment_method"); ok {
		if !slices.Contains(domain.PaymentMethods, v) {
			return req, domain.Invalid("payment_method", "payment_method must be one of %s.", strings.Join(domain.PaymentMethods, ", "))
		}
		f.PaymentMethod = &v
	}
	if v, ok := get("status"); ok {
		switch v {
		case "any":
		case domain.StatusPaid, domain.StatusPartiallyRefunded, domain.StatusRefunded, domain.StatusVoided:
			f.Status = &v
		default:
			return req, domain.Invalid("status", "status must be any, paid, partially_refunded, refunded or voided.")
		}
	}
	minute := func(k string) (*int, error) {
		v, ok := get(k)
		if !ok {
			return nil, nil
		}
		m := hhmm.FindStringSubmatch(v)
		if m == nil {
			return nil, domain.Invalid(k, "%s must be HH:MM on a 24-hour clock (00:00 to 23:59).", k)
		}
		h, _ := strconv.Atoi(m[1])
		mm, _ := strconv.Atoi(m[2])
		n := h*60 + mm
		return &n, nil
	}
	if f.StartMinute, err = minute("start_time"); err != nil {
		return req, err
	}
	if f.EndMinute, err = minute("end_time"); err != nil {
		return req, err
	}
	if v, ok := get("limit"); ok {
		n, err := integerParam("limit", v, 1, domain.MaxSearchLimit)
		if err != nil {
			return req, err
		}
		f.Limit = int(n)
	}
	if v, ok := get("cursor"); ok {
		if v == "" || len(v) > 1024 || !domain.ValidText(v) {
			return req, domain.Invalid("cursor", "cursor must be 1 to 1024 characters: pass nextCursor unchanged.")
		}
		req.Cursor = v
	}
	date := func(k string) (*bizdate.Date, error) {
		v, ok := get(k)
		if !ok {
			return nil, nil
		}
		d, err := bizdate.Parse(v)
		if err != nil {
			return nil, domain.Invalid(k, "%s must be a date written YYYY-MM-DD.", k)
		}
		return &d, nil
	}
	if f.StartDate, err = date("start_date"); err != nil {
		return req, err
	}
	if f.EndDate, err = date("end_date"); err != nil {
		return req, err
	}
	switch {
	case f.StartDate != nil && f.EndDate == nil:
		return req, domain.Invalid("end_date", "end_date is required with start_date.")
	case f.EndDate != nil && f.StartDate == nil:
		return req, domain.Invalid("start_date", "start_date is required with end_date.")
	case f.StartDate != nil:
		if f.EndDate.Before(*f.StartDate) {
			return req, domain.Invalid("end_date", "end_date must not be before start_date.")
		}
		if n := f.StartDate.DaysInclusive(*f.EndDate); n > domain.MaxDateRangeDays {
			return req, domain.Invalid("end_date", "The date range covers %d days; it may cover at most %d days (start_date to end_date inclusive).", n, domain.MaxDateRangeDays)
		}
		f.From = f.StartDate.Start(loc, dayStartHour)
		f.Until = f.EndDate.AddDays(1).Start(loc, dayStartHour)
		req.Scope = domain.ScopeDateRange
	default:
		for _, k := range keys {
			if !slices.Contains(NonFilterParams, k) && (k != "status" || q.Get(k) != "any") {
				return req, domain.Invalid("start_date", "%s needs start_date and end_date (a range of at most %d days); only order_id may search all history.", k, domain.MaxDateRangeDays)
			}
		}
		req.Scope = domain.ScopeAllHistory
	}
	req.Filter = f
	return req, nil
}

// integerParam reads a decimal integer from min to max; a number outside
// the range (however many digits) is told apart from one that is not a
// number.
func integerParam(name, v string, min, max int64) (int64, error) {
	digits := strings.TrimPrefix(v, "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, domain.Invalid(name, "%s must be an integer from %d to %d.", name, min, max)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < min || n > max {
		return 0, domain.Invalid(name, "%s is out of range: it must be an integer from %d to %d.", name, min, max)
	}
	return n, nil
}
