package api

import (
	"net/url"
	"strconv"
	"unicode/utf8"

	"partnerapi.dev/pkg/bizdate"
	"partnerapi.dev/pkg/httpx"
	"partnerapi.dev/services/accounting/internal/domain"
)

// onlyParams refuses a query parameter outside allowed or given twice.
func onlyParams(q url.Values, allowed ...string) error {
	k, repeated := httpx.AllowQuery(q, true, allowed...)
	switch {
	case k == "":
		return nil
	case repeated:
		return httpx.BadRequest("Query parameter %q is given more than once.", k)
	}
	return httpx.BadRequest("Query parameter %q is not supported here.", k)
}

func dateParam(q url.Values, name string) (bizdate.Date, error) {
	v := q.Get(name)
	if v == "" {
		return bizdate.Date{}, httpx.BadRequest("%s is required (YYYY-MM-DD).", name)
	}
	d, err := bizdate.Parse(v)
	if err != nil {
		return bizdate.Date{}, httpx.BadRequest("%s must be a YYYY-MM-DD date.", name)
	}
	return d, nil
}

// window reads start_date and end_date, a window the domain accepts.
func window(q url.Values) (bizdate.Date, bizdate.Date, error) {
	start, err := dateParam(q, "start_date")
	if err != nil {
		return start, start, err
	}
	end, err := dateParam(q, "end_date")
	if err != nil {
		return start, end, err
	}
	return start, end, domain.CheckWindow(start, end)
}

// parsePeriod reads start_date, end_date and scope (and allows extra).
func parsePeriod(q url.Values, extra ...string) (domain.PeriodQuery, error) {
	if err := onlyParams(q, append([]string{"organization_id", "start_date", "end_date", "scope"}, extra...)...); err != nil {
		return domain.PeriodQuery{}, err
	}
	start, end, err := window(q)
	if err != nil {
		return domain.PeriodQuery{}, err
	}
	return domain.NewPeriod(q.Get("scope"), start, end)
}

// parseWorkspace reads the workspace's query: a report period not after
// today's business date and an optional query of 1 to 255 characters.
func (h *Handlers) parseWorkspace(q url.Values, t domain.Tenant) (domain.PeriodQuery, string, error) {
	p, err := parsePeriod(q, "query")
	if err != nil {
		return p, "", err
	}
	if err := h.Service.CheckWorkspace(t, p); err != nil {
		return p, "", err
	}
	query, has := q["query"]
	if has && (len(query[0]) == 0 || utf8.RuneCountInString(query[0]) > 255) {
		return p, "", httpx.BadRequest("query must be 1 to 255 characters.")
	}
	if has {
		return p, query[0], nil
	}
	return p, "", nil
}

// parseRefunds reads the refunds query: a window of at most 31 dates, an
// optional exact order id, limit 1 to 200 (50), an optional cursor.
func parseRefunds(q url.Values) (domain.RefundQuery, error) {
	if err := onlyParams(q, "organization_id", "start_date", "end_date", "order_id", "cursor", "limit"); err != nil {
		return domain.RefundQuery{}, err
	}
	start, end, err := window(q)
	if err != nil {
		return domain.RefundQuery{}, err
	}
	rq := domain.RefundQuery{Start: start, End: end, Limit: 50}
	if v, ok := q["order_id"]; ok {
		if len(v[0]) == 0 || len(v[0]) > 255 {
			return rq, httpx.BadRequest("order_id must be 1 to 255 characters.")
		}
		id := v[0]
		rq.OrderID = &id
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			return rq, httpx.BadRequest("limit must be an integer from 1 to 200.")
		}
		rq.Limit = n
	}
	if v, ok := q["cursor"]; ok {
		if len(v[0]) == 0 || len(v[0]) > 1024 {
			return rq, httpx.BadRequest("cursor is invalid; pass nextCursor unchanged.")
		}
		rq.Cursor = v[0]
	}
	return rq, nil
}
