package domain

import "unicode/utf8"

// Search scopes.
const (
	ScopeAllHistory = "all_history"
	ScopeDateRange  = "date_range"
)

// SearchRequest is a validated search before the cursor is applied.
type SearchRequest struct {
	Filter Filter
	Scope  string
	Cursor string
}

// TextParam checks a text query parameter or path segment: text the
// database can hold (valid UTF-8, no NUL), 1 to max characters.
func TextParam(name, v string, max int) error {
	if !ValidText(v) {
		return Invalid(name, "%s must be valid UTF-8 text without NUL characters.", name)
	}
	if n := utf8.RuneCountInString(v); n < 1 || n > max {
		return Invalid(name, "%s must be 1 to %d characters.", name, max)
	}
	return nil
}

// OrderIDParam checks the orderId of order details with the bound search
// applies to order_id.
func OrderIDParam(v string) error { return TextParam("orderId", v, MaxOrderIDLength) }
