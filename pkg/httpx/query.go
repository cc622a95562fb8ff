package httpx

import (
	"net/url"
	"slices"
	"sort"
)

// AllowQuery checks a request's query against the parameters an operation
// accepts. It returns the first parameter, in name order, that is not one of
// allowed or, when once is set, that is given more than once (repeated is
// then true); name is "" when every parameter is fine. The caller words the
// answer, so each operation can say what it does accept.
func AllowQuery(q url.Values, once bool, allowed ...string) (name string, repeated bool) {
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !slices.Contains(allowed, k) {
			return k, false
		}
		if once && len(q[k]) > 1 {
			return k, true
		}
	}
	return "", false
}
