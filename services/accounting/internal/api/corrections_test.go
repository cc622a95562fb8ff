package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi.dev/services/accounting/internal/domain"
)

func base(restaurant string) string { return "/v1/restaurants/" + restaurant }

func correctionDay(e *env) {
	e.ingest(
		source(helsinki, "o-1", "card", 2480, hel(2026, 7, 1, 12, 0)),
		source(helsinki, "o-2", "cash", 1200, hel(2026, 7, 1, 13, 0)),
		source(helsinki, "o-3", "card", 900, hel(2026, 7, 1, 14, 0)),
		source(helsinki, "tab-1", "card", 3000, hel(2026, 7, 1, 20, 0), set("sourceKind", "tab"), set("orderIds", []string{"o-10", "o-11"})),
	)
}

func previewBody(action string, to any) map[string]any {
	b := map[string]any{"businessDate": "2026-07-01", "sourceKind": "order", "sourceRecordId": "o-1", "action": action, "reason": "Paid in cash, keyed as card"}
	if to != nil {
		b["toMethodKey"] = to
	}
	return b
}

func writeBody(preview map[string]any, key string) map[string]any {
	in := preview["input"].(map[string]any)
	b := map[string]any{}
	for k, v := range in {
		b[k] = v
	}
	b["expectedRevisionId"] = preview["expectedRevisionId"]
	b["previewFingerprint"] = preview["previewFingerprint"]
	b["expiresAt"] = preview["expiresAt"]
	b["confirmed"] = true
	b["idempotencyKey"] = key
	return b
}

func ledgerRows(t *testing.T, e *env) int64 {
	var n int64
	if err := e.db.Gorm.Raw(`SELECT count(*) FROM correction_ledger`).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCorrectionCycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	correctionDay(e)
	r := base(helsinki)

	// workspace: the day's sources, a query narrows to one
	status, body := e.get(r+"/payment-correction-workspace?scope=day&start_date=2026-07-01&end_date=2026-07-01", helsinki)
	ws := data(t, body)
	if status != 200 || len(ws["sources"].([]any)) != 4 || ws["canWrite"] != true || len(ws["methods"].([]any)) != len(domain.Methods) {
		t.Fatalf("workspace: %d %v", status, ws)
	}
	for q, want := range map[string]string{"rh-o-2": "order:o-2", "o-11": "tab:tab-1", "tab-1": "tab:tab-1"} {
		_, body = e.get(r+"/payment-correction-workspace?scope=day&start_date=2026-07-01&end_date=2026-07-01&query="+q, helsinki)
		srcs := data(t, body)["sources"].([]any)
		if len(srcs) != 1 || srcs[0].(map[string]any)["sourceKey"] != want {
			t.Errorf("query %s: %v", q, srcs)
		}
	}
	status, _ = e.get(r+"/payment-correction-workspace?scope=day&start_date=2026-07-21&end_date=2026-07-21", helsinki)
	if status != 400 {
		t.Fatalf("future workspace: %d", status)
	}

	// preview mutates nothing
	status, body = e.post(r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))
	if status != 200 {
		t.Fatalf("preview: %d %v", status, body)
	}
	pv := data(t, body)
	before, after := pv["before"].(map[string]any), pv["after"].(map[string]any)
	checkArithmetic(t, before)
	checkArithmetic(t, after)
	if num(rowsByKey(after, "adjustedRows")["cash"]["grossMinor"]) != 1200+2480 || num(rowsByKey(after, "adjustedRows")["card"]["grossMinor"]) != 3900 {
		t.Fatalf("after: %v", after["adjustedRows"])
	}
	if ledgerRows(t, e) != 0 {
		t.Fatal("preview wrote to the ledger")
	}
	if exp, _ := time.Parse(time.RFC3339, pv["expiresAt"].(string)); !exp.Equal(e.clock.now().Add(5 * time.Minute)) {
		t.Fatalf("expiresAt %v", pv["expiresAt"])
	}

	// apply
	key := "6f1c1f4e-1111-4a4a-8b8b-000000000001"
	status, body = e.post(r+"/payment-corrections/apply", helsinki, writeBody(pv, key))
	if status != 200 {
		t.Fatalf("apply: %d %v", status, body)
	}
	res := data(t, body)
	rep := res["report"].(map[string]any)
	checkArithmetic(t, rep)
	if res["replayed"] != false || rep["status"] != "ready" || len(rep["appliedCorrectionIds"].([]any)) != 1 || len(rep["sources"].([]any)) != 1 {
		t.Fatalf("apply result: %v", res)
	}
	if res["revisionId"] == pv["expectedRevisionId"] {
		t.Fatal("revision did not move")
	}
	// the adjusted report equals the preview's after
	if fmt.Sprint(rep["adjustedRows"]) != fmt.Sprint(after["adjustedRows"]) {
		t.Fatalf("adjusted %v != preview %v", rep["adjustedRows"], after["adjustedRows"])
	}

	// replay: same answer, replayed, no second ledger row
	status, body = e.post(r+"/payment-corrections/apply", helsinki, writeBody(pv, key))
	again := data(t, body)
	if status != 200 || again["replayed"] != true || again["batchId"] != res["batchId"] || again["revisionId"] != res["revisionId"] || ledgerRows(t, e) != 1 {
		t.Fatalf("replay: %d %v rows %d", status, again, ledgerRows(t, e))
	}
	// same key, other body
	other := writeBody(pv, key)
	other["reason"] = "something else"
	if status, body = e.post(r+"/payment-corrections/apply", helsinki, other); status != 409 {
		t.Fatalf("key reuse: %d %v", status, body)
	}
	// a second apply of the same preview with a new key: the revision moved
	if status, _ = e.post(r+"/payment-corrections/apply", helsinki, writeBody(pv, "6f1c1f4e-1111-4a4a-8b8b-000000000002")); status != 409 {
		t.Fatalf("stale revision: %d", status)
	}

	// the month report shows the correction
	_, body = e.get(reportPath(helsinki, "month", "2026-07-01", "2026-07-31"), helsinki)
	month := data(t, body)
	checkArithmetic(t, month)
	if len(month["corrections"].([]any)) != 1 || num(month["days"].([]any)[0].(map[string]any)["correctionCount"]) != 1 {
		t.Fatalf("month corrections: %v", month["corrections"])
	}

	// correcting a corrected source again: undo first
	if status, _ = e.post(r+"/payment-corrections/preview", helsinki, previewBody("correct", "online")); status != 409 {
		t.Fatalf("second correct: %d", status)
	}

	// undo
	status, body = e.post(r+"/payment-corrections/preview", helsinki, previewBody("undo", nil))
	if status != 200 {
		t.Fatalf("undo preview: %d %v", status, body)
	}
	up := data(t, body)
	status, body = e.post(r+"/payment-corrections/undo", helsinki, writeBody(up, "6f1c1f4e-1111-4a4a-8b8b-000000000003"))
	if status != 200 {
		t.Fatalf("undo: %d %v", status, body)
	}
	rep = data(t, body)["report"].(map[string]any)
	checkArithmetic(t, rep)
	if num(rowsByKey(rep, "adjustedRows")["card"]["grossMinor"]) != 2480+900+3000 || len(rep["appliedCorrectionIds"].([]any)) != 0 || ledgerRows(t, e) != 2 {
		t.Fatalf("undo report: %v", rep)
	}
	cs := rep["corrections"].([]any)
	if len(cs) != 2 || cs[0].(map[string]any)["undoneByCorrectionId"] != cs[1].(map[string]any)["correctionId"] || cs[1].(map[string]any)["action"] != "undo" {
		t.Fatalf("ledger: %v", cs)
	}
	// nothing left to undo
	if status, _ = e.post(r+"/payment-corrections/preview", helsinki, previewBody("undo", nil)); status != 409 {
		t.Fatalf("undo twice: %d", status)
	}
}

func TestCorrectionRejections(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	correctionDay(e)
	r := base(helsinki)
	_, body := e.post(r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))
	pv := data(t, body)

	for name, tc := range map[string]struct {
		change func(map[string]any)
		status int
	}{
		"tampered fingerprint": {func(b map[string]any) { b["previewFingerprint"] = strings.Repeat("0", 64) }, 409},
		"tampered expiry":      {func(b map[string]any) { b["expiresAt"] = "2026-07-20T11:00:00Z" }, 409},
		"other destination":    {func(b map[string]any) { b["toMethodKey"] = "online" }, 409},
		"stale revision":       {func(b map[string]any) { b["expectedRevisionId"] = "6f1c1f4e-0000-4a4a-8b8b-000000000000" }, 409},
		"not confirmed":        {func(b map[string]any) { b["confirmed"] = false }, 400},
		"undo action":          {func(b map[string]any) { b["action"] = "undo" }, 400},
		"bad key":              {func(b map[string]any) { b["idempotencyKey"] = "k" }, 400},
		"unknown field":        {func(b map[string]any) { b["extra"] = 1 }, 400},
		"unknown source":       {func(b map[string]any) { b["sourceRecordId"] = "nope" }, 404},
		"other date":           {func(b map[string]any) { b["businessDate"] = "2026-07-02" }, 404},
	} {
		b := writeBody(pv, domain.NewID())
		tc.change(b)
		if status, body := e.post(r+"/payment-corrections/apply", helsinki, b); status != tc.status {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}
	for name, b := range map[string]map[string]any{
		"same method":    previewBody("correct", "card"),
		"unknown method": previewBody("correct", "bitcoin"),
		"no destination": previewBody("correct", nil),
		"undo with to":   previewBody("undo", "cash"),
		"no reason":      func() map[string]any { b := previewBody("correct", "cash"); b["reason"] = ""; return b }(),
		"long reason": func() map[string]any {
			b := previewBody("correct", "cash")
			b["reason"] = strings.Repeat("é", 501)
			return b
		}(),
		"key in preview": func() map[string]any {
			b := previewBody("correct", "cash")
			b["idempotencyKey"] = domain.NewID()
			return b
		}(),
	} {
		if status, body := e.post(r+"/payment-corrections/preview", helsinki, b); status != 400 {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}
	if ledgerRows(t, e) != 0 {
		t.Fatal("a rejected write reached the ledger")
	}

	// expiry: five minutes later the preview is refused
	e.clock.add(5*time.Minute + time.Second)
	if a := e.refusal(r+"/payment-corrections/apply", helsinki, writeBody(pv, domain.NewID())); a.Status != 409 || !strings.Contains(a.Message, "expired") {
		t.Fatalf("expired: %d %s", a.Status, a.Raw)
	}

	// the source changes after the preview: fingerprint mismatch
	e.clock.add(-5 * time.Minute)
	e.ingest(source(helsinki, "o-1", "card", 2490, hel(2026, 7, 1, 12, 0)))
	if status, _ := e.post(r+"/payment-corrections/apply", helsinki, writeBody(pv, domain.NewID())); status != 409 {
		t.Fatalf("changed source: %d", status)
	}
}

func TestConcurrentAppliesOfOnePreview(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	correctionDay(e)
	r := base(helsinki)
	_, body := e.post(r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))
	pv := data(t, body)
	statuses := make([]int, 8)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			statuses[i], _ = e.post(r+"/payment-corrections/apply", helsinki, writeBody(pv, domain.NewID()))
		})
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		switch s {
		case 200:
			ok++
		case 409:
		default:
			t.Errorf("status %d", s)
		}
	}
	if ok != 1 || ledgerRows(t, e) != 1 {
		t.Fatalf("statuses %v, ledger rows %d", statuses, ledgerRows(t, e))
	}
}

func TestSourceChangedAfterCorrectionBlocksTheDay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	correctionDay(e)
	r := base(helsinki)
	_, body := e.post(r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))
	pv := data(t, body)
	if status, body := e.post(r+"/payment-corrections/apply", helsinki, writeBody(pv, domain.NewID())); status != 200 {
		t.Fatalf("apply: %d %v", status, body)
	}
	// the same source arrives again unchanged: nothing moves
	correctionDay(e)
	_, body = e.get(reportPath(helsinki, "day", "2026-07-01", "2026-07-01"), helsinki)
	if rep := data(t, body); rep["status"] != "ready" {
		t.Fatalf("unchanged re-ingest: %v", rep["status"])
	}
	fp := data(t, body)["currentSourceFingerprint"]
	// then with other content
	e.ingest(source(helsinki, "o-1", "card", 2500, hel(2026, 7, 1, 12, 0)))
	_, body = e.get(reportPath(helsinki, "day", "2026-07-01", "2026-07-01"), helsinki)
	rep := data(t, body)
	checkArithmetic(t, rep)
	if rep["status"] != "blocked_stale" || rep["adjustedRows"] != nil || strings.Join(warningCodes(rep), ",") != "source_changed_after_correction" {
		t.Fatalf("changed: %v %v", rep["status"], rep["warnings"])
	}
	if w := rep["warnings"].([]any)[0].(map[string]any); w["correctionId"] != rep["appliedCorrectionIds"].([]any)[0] {
		t.Fatalf("warning %v", w)
	}
	if rep["currentSourceFingerprint"] == fp {
		t.Fatal("source fingerprint did not change")
	}
	// undo clears the block
	_, body = e.post(r+"/payment-corrections/preview", helsinki, previewBody("undo", nil))
	if status, body := e.post(r+"/payment-corrections/undo", helsinki, writeBody(data(t, body), domain.NewID())); status != 200 || data(t, body)["report"].(map[string]any)["status"] != "ready" {
		t.Fatalf("undo: %d %v", status, body)
	}
}

func TestLedgerIsAppendOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	correctionDay(e)
	r := base(helsinki)
	_, body := e.post(r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))
	if status, _ := e.post(r+"/payment-corrections/apply", helsinki, writeBody(data(t, body), domain.NewID())); status != 200 {
		t.Fatal("apply")
	}
	for _, stmt := range []string{
		`UPDATE correction_ledger SET to_method_key = 'online'`,
		`DELETE FROM correction_ledger`,
		`TRUNCATE correction_ledger CASCADE`,
	} {
		if err := e.db.Gorm.Exec(stmt).Error; err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v", stmt, err)
		}
	}
	if ledgerRows(t, e) != 1 {
		t.Fatal("ledger changed")
	}
}

func TestDatabaseDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	correctionDay(e)
	r := base(helsinki)
	_, body := e.post(r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))
	pv := data(t, body)
	// Refuse new connections to the test database and end the open ones.
	name := e.url[strings.LastIndex(e.url, "/")+1:]
	name = name[:strings.IndexByte(name+"?", '?')]
	admin := e.url[:strings.LastIndex(e.url, "/")] + "/postgres?sslmode=disable"
	adminDB := openAdmin(t, admin)
	for _, stmt := range []string{
		`ALTER DATABASE "` + name + `" ALLOW_CONNECTIONS false`,
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '` + name + `'`,
	} {
		if err := adminDB.Exec(stmt).Error; err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { adminDB.Exec(`ALTER DATABASE "` + name + `" ALLOW_CONNECTIONS true`) })
	for _, path := range []string{
		reportPath(helsinki, "day", "2026-07-01", "2026-07-01"),
		r + "/refunds?start_date=2026-07-01&end_date=2026-07-01",
		r + "/payment-correction-workspace?scope=day&start_date=2026-07-01&end_date=2026-07-01",
		r + "/accounting-summary?scope=day&start_date=2026-07-01&end_date=2026-07-01",
	} {
		if a := e.refusal(path, helsinki, nil); a.Status != http.StatusServiceUnavailable || a.Error != "service_unavailable" {
			t.Errorf("GET %s: %d %s", path, a.Status, a.Raw)
		}
	}
	for path, b := range map[string]map[string]any{
		r + "/payment-corrections/preview": previewBody("correct", "cash"),
		r + "/payment-corrections/apply":   writeBody(pv, domain.NewID()),
	} {
		if a := e.refusal(path, helsinki, b); a.Status != http.StatusServiceUnavailable || a.Error != "capability_disabled" {
			t.Errorf("POST %s: %d %s", path, a.Status, a.Raw)
		}
	}
}

func TestWriteBoundsAndIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	correctionDay(e)
	r := base(helsinki)
	big := previewBody("correct", "cash")
	big["reason"] = strings.Repeat("x", 1<<20)
	if a := e.refusal(r+"/payment-corrections/preview", helsinki, big); a.Status != http.StatusRequestEntityTooLarge || a.Error != "payload_too_large" {
		t.Fatalf("big body: %d %s", a.Status, a.Raw)
	}
	// another restaurant's context cannot reach this restaurant's sources
	if status, _ := e.post(base(other)+"/payment-corrections/preview", other, previewBody("correct", "cash")); status != http.StatusNotFound {
		t.Fatalf("other restaurant's source: %d", status)
	}
	if status, _ := e.post(r+"/payment-corrections/preview", other, previewBody("correct", "cash")); status != http.StatusNotFound {
		t.Fatalf("path outside the context: %d", status)
	}
	// the workspace takes the report's month rule and the 31-date window
	for _, q := range []string{
		"scope=month&start_date=2026-06-15&end_date=2026-07-01",
		"scope=day&start_date=2026-07-01&end_date=2026-07-02",
		"scope=month&start_date=2026-07-01&end_date=2026-07-10&query=",
		"scope=month&start_date=2026-07-01&end_date=2026-07-10&query=" + strings.Repeat("q", 256),
	} {
		if status, body := e.get(r+"/payment-correction-workspace?"+q, helsinki); status != http.StatusBadRequest {
			t.Errorf("%s: %d %v", q, status, body)
		}
	}
}

// TestBodyErrorsNameTheField: a bad date, a wrong type or text that is not
// UTF-8 without NUL in a correction body is a 400 naming the field as the
// body spells it and what it must be (a NUL in sourceRecordId, sourceKind
// or reason reached Postgres and answered 500).
func TestBodyErrorsNameTheField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	correctionDay(e)
	r := base(helsinki)
	preview := func(field, raw string) string {
		b := previewBody("correct", "cash")
		delete(b, field)
		body := strings.Replace(string(mustJSON(t, b)), "{", `{"`+field+`":`+raw+`,`, 1)
		status, out := e.do(http.MethodPost, r+"/payment-corrections/preview", helsinki, strings.NewReader(body), nil)
		if status != http.StatusBadRequest {
			t.Fatalf("%s=%s: %d %s", field, raw, status, out)
		}
		return decode(t, out)["message"].(string)
	}
	for _, tc := range []struct{ field, raw, want string }{
		{"businessDate", `"15.11.2026"`, "businessDate must be a YYYY-MM-DD date."},
		{"businessDate", `"2026-02-30"`, "businessDate must be a YYYY-MM-DD date."},
		{"businessDate", `20261115`, "businessDate must be a YYYY-MM-DD date."},
		{"sourceRecordId", `"o-1\u0000"`, "sourceRecordId is not valid text: send UTF-8 without NUL characters."},
		{"sourceKind", `"order\u0000"`, "sourceKind is not valid text: send UTF-8 without NUL characters."},
		{"reason", `"Paid\u0000"`, "reason is not valid text: send UTF-8 without NUL characters."},
		{"reason", "\"Paid \xff\"", "reason is not valid text: send UTF-8 without NUL characters."},
	} {
		if got := preview(tc.field, tc.raw); got != tc.want {
			t.Errorf("%s=%s: %q, want %q", tc.field, tc.raw, got, tc.want)
		}
	}
	_, p := e.post(r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))
	apply := writeBody(data(t, p), "6e000000-0000-4000-8000-000000000001")
	for field, tc := range map[string]struct {
		value any
		want  string
	}{
		"expiresAt": {"soon", "expiresAt must be an RFC 3339 date-time (2026-11-15T09:30:00Z)."},
		"confirmed": {"yes", "confirmed must be true or false."},
	} {
		b := map[string]any{}
		for k, v := range apply {
			b[k] = v
		}
		b[field] = tc.value
		status, out := e.post(r+"/payment-corrections/apply", helsinki, b)
		if status != http.StatusBadRequest || out["message"] != tc.want {
			t.Errorf("%s: %d %v, want %q", field, status, out, tc.want)
		}
	}
}
