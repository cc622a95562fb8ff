package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"partnerapi.dev/pkg/apispec"
	"partnerapi.dev/tools/system"
)

// unknownQueryParameters holds docs/api.md's request rules to the system:
// every read except GET /v1/restaurants and GET /v1/organizations refuses a
// query parameter it does not define, with a 400 naming it.
func unknownQueryParameters(t *testing.T, sys *system.Stack, restaurant string) {
	doc, err := apispec.Load()
	if err != nil {
		t.Fatal(err)
	}
	ignoring := map[string]bool{"/v1/restaurants": true, "/v1/organizations": true}
	for path, item := range doc.Paths.Map() {
		op := item.Get
		if op == nil || !strings.HasPrefix(path, "/v1/restaurants") && !ignoring[path] {
			continue
		}
		concrete := path
		for _, seg := range strings.Split(path, "/") {
			if strings.HasPrefix(seg, "{") {
				v := uuid.NewString()
				if seg == "{restaurantId}" {
					v = restaurant
				}
				concrete = strings.Replace(concrete, seg, v, 1)
			}
		}
		status, body := getRetrying(t, sys, concrete+"?zzz=1", sys.Token)
		var e struct{ Message string }
		_ = json.Unmarshal(body, &e)
		switch {
		case ignoring[path] && status == 400:
			t.Errorf("%s: docs/api.md says it ignores unknown query parameters, but it answers %d %s", path, status, body)
		case !ignoring[path] && (status != 400 || !strings.Contains(e.Message, "zzz")):
			t.Errorf("GET %s?zzz=1: docs/api.md says it is refused with a 400 naming zzz, got %d %s", path, status, body)
		}
	}
}

// getRetrying is a GET that waits out the rate limit.
func getRetrying(t *testing.T, sys *system.Stack, path, token string) (int, []byte) {
	t.Helper()
	for {
		req, _ := http.NewRequest(http.MethodGet, sys.Gateway+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			return resp.StatusCode, body
		}
		wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		time.Sleep(time.Duration(max(wait, 1)) * time.Second)
	}
}
