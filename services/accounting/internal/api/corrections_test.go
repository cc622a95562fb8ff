package api_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"partnerapi.dev/pkg/servicetest"
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

// writeBody is the apply or undo body repeating a preview: its input and
// what it names, as a map so tests can change any field.
func writeBody(pv preview, key string) map[string]any {
	b := map[string]any{}
	if err := json.Unmarshal(pv.Input, &b); err != nil {
		panic(err)
	}
	b["expectedRevisionId"] = pv.ExpectedRevisionID
	b["previewFingerprint"] = pv.PreviewFingerprint
	b["expiresAt"] = pv.ExpiresAt
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
	ws := mustGet[workspace](e, r+"/payment-correction-workspace?scope=day&start_date=2026-07-01&end_date=2026-07-01", helsinki)
	if len(ws.Sources) != 4 || !ws.CanWrite || len(ws.Methods) != len(domain.Methods) {
		t.Fatalf("workspace: %+v", ws)
	}
	for q, want := range map[string]string{"rh-o-2": "order:o-2", "o-11": "tab:tab-1", "tab-1": "tab:tab-1"} {
		srcs := mustGet[workspace](e, r+"/payment-correction-workspace?scope=day&start_date=2026-07-01&end_date=2026-07-01&query="+q, helsinki).Sources
		if len(srcs) != 1 || srcs[0].SourceKey != want {
			t.Errorf("query %s: %+v", q, srcs)
		}
	}
	if a := e.refusal(r+"/payment-correction-workspace?scope=day&start_date=2026-07-21&end_date=2026-07-21", helsinki, nil); a.Status != 400 {
		t.Fatalf("future workspace: %d", a.Status)
	}

	// preview mutates nothing
	pv := mustPost[preview](e, r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))
	before, after := pv.Before, pv.After
	checkArithmetic(t, before)
	checkArithmetic(t, after)
	if rowsByKey(after.AdjustedRows)["cash"].GrossMinor != 1200+2480 || rowsByKey(after.AdjustedRows)["card"].GrossMinor != 3900 {
		t.Fatalf("after: %+v", after.AdjustedRows)
	}
	if ledgerRows(t, e) != 0 {
		t.Fatal("preview wrote to the ledger")
	}
	if exp, _ := time.Parse(time.RFC3339, pv.ExpiresAt); !exp.Equal(e.clock.now().Add(5 * time.Minute)) {
		t.Fatalf("expiresAt %v", pv.ExpiresAt)
	}

	// apply
	key := "6f1c1f4e-1111-4a4a-8b8b-000000000001"
	res := mustPost[result](e, r+"/payment-corrections/apply", helsinki, writeBody(pv, key))
	rep := res.Report
	checkArithmetic(t, rep)
	if res.Replayed || rep.Status != "ready" || len(rep.AppliedCorrectionIDs) != 1 || len(rep.Sources) != 1 {
		t.Fatalf("apply result: %+v", res)
	}
	if res.RevisionID == pv.ExpectedRevisionID {
		t.Fatal("revision did not move")
	}
	// the adjusted report equals the preview's after
	if !reflect.DeepEqual(rep.AdjustedRows, after.AdjustedRows) {
		t.Fatalf("adjusted %+v != preview %+v", rep.AdjustedRows, after.AdjustedRows)
	}

	// replay: same answer, replayed, no second ledger row
	a := post[result](e, r+"/payment-corrections/apply", helsinki, writeBody(pv, key))
	again := a.Data
	if a.Status != 200 || !again.Replayed || again.BatchID != res.BatchID || again.RevisionID != res.RevisionID || ledgerRows(t, e) != 1 {
		t.Fatalf("replay: %d %s rows %d", a.Status, a.Raw, ledgerRows(t, e))
	}
	// same key, other body
	other := writeBody(pv, key)
	other["reason"] = "something else"
	if a := e.refusal(r+"/payment-corrections/apply", helsinki, other); a.Status != 409 {
		t.Fatalf("key reuse: %d %s", a.Status, a.Raw)
	}
	// a second apply of the same preview with a new key: the revision moved
	if a := e.refusal(r+"/payment-corrections/apply", helsinki, writeBody(pv, "6f1c1f4e-1111-4a4a-8b8b-000000000002")); a.Status != 409 {
		t.Fatalf("stale revision: %d", a.Status)
	}

	// the month report shows the correction
	month := mustGet[report](e, reportPath(helsinki, "month", "2026-07-01", "2026-07-31"), helsinki)
	checkArithmetic(t, month)
	if len(month.Corrections) != 1 || month.Days[0].CorrectionCount != 1 {
		t.Fatalf("month corrections: %+v", month.Corrections)
	}

	// correcting a corrected source again: undo first
	if a := e.refusal(r+"/payment-corrections/preview", helsinki, previewBody("correct", "online")); a.Status != 409 {
		t.Fatalf("second correct: %d", a.Status)
	}

	// undo
	up := mustPost[preview](e, r+"/payment-corrections/preview", helsinki, previewBody("undo", nil))
	rep = mustPost[result](e, r+"/payment-corrections/undo", helsinki, writeBody(up, "6f1c1f4e-1111-4a4a-8b8b-000000000003")).Report
	checkArithmetic(t, rep)
	if rowsByKey(rep.AdjustedRows)["card"].GrossMinor != 2480+900+3000 || len(rep.AppliedCorrectionIDs) != 0 || ledgerRows(t, e) != 2 {
		t.Fatalf("undo report: %+v", rep)
	}
	cs := rep.Corrections
	if len(cs) != 2 || cs[0].UndoneByCorrectionID == nil || *cs[0].UndoneByCorrectionID != cs[1].CorrectionID || cs[1].Action != "undo" {
		t.Fatalf("ledger: %+v", cs)
	}
	// nothing left to undo
	if a := e.refusal(r+"/payment-corrections/preview", helsinki, previewBody("undo", nil)); a.Status != 409 {
		t.Fatalf("undo twice: %d", a.Status)
	}
}

func TestCorrectionRejections(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	correctionDay(e)
	r := base(helsinki)
	pv := mustPost[preview](e, r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))

	for name, tc := range map[string]struct {
		change func(map[string]any)
		status int
	}{
		"tampered fingerprint":        {func(b map[string]any) { b["previewFingerprint"] = strings.Repeat("0", 64) }, 409},
		"fingerprint in upper case":   {func(b map[string]any) { b["previewFingerprint"] = strings.ToUpper(b["previewFingerprint"].(string)) }, 409},
		"fingerprint not hexadecimal": {func(b map[string]any) { b["previewFingerprint"] = strings.Repeat("g", 64) }, 400},
		"tampered expiry":             {func(b map[string]any) { b["expiresAt"] = "2026-07-20T11:00:00Z" }, 409},
		"other destination":           {func(b map[string]any) { b["toMethodKey"] = "online" }, 409},
		"stale revision":              {func(b map[string]any) { b["expectedRevisionId"] = "6f1c1f4e-0000-4a4a-8b8b-000000000000" }, 409},
		"not confirmed":               {func(b map[string]any) { b["confirmed"] = false }, 400},
		"undo action":                 {func(b map[string]any) { b["action"] = "undo" }, 400},
		"bad key":                     {func(b map[string]any) { b["idempotencyKey"] = "k" }, 400},
		"unknown field":               {func(b map[string]any) { b["extra"] = 1 }, 400},
		"unknown source":              {func(b map[string]any) { b["sourceRecordId"] = "nope" }, 404},
		"other date":                  {func(b map[string]any) { b["businessDate"] = "2026-07-02" }, 404},
	} {
		b := writeBody(pv, domain.NewID())
		tc.change(b)
		if a := e.refusal(r+"/payment-corrections/apply", helsinki, b); a.Status != tc.status {
			t.Errorf("%s: %d %s", name, a.Status, a.Raw)
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
		if a := e.refusal(r+"/payment-corrections/preview", helsinki, b); a.Status != 400 {
			t.Errorf("%s: %d %s", name, a.Status, a.Raw)
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
	if a := e.refusal(r+"/payment-corrections/apply", helsinki, writeBody(pv, domain.NewID())); a.Status != 409 {
		t.Fatalf("changed source: %d", a.Status)
	}
}

func TestConcurrentAppliesOfOnePreview(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	correctionDay(e)
	r := base(helsinki)
	pv := mustPost[preview](e, r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))
	statuses := make([]int, 8)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = post[json.RawMessage](e, r+"/payment-corrections/apply", helsinki, writeBody(pv, domain.NewID())).Status
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
	pv := mustPost[preview](e, r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))
	mustPost[result](e, r+"/payment-corrections/apply", helsinki, writeBody(pv, domain.NewID()))
	// the same source arrives again unchanged: nothing moves
	correctionDay(e)
	rep := mustGet[report](e, reportPath(helsinki, "day", "2026-07-01", "2026-07-01"), helsinki)
	if rep.Status != "ready" {
		t.Fatalf("unchanged re-ingest: %v", rep.Status)
	}
	fp := rep.CurrentSourceFingerprint
	// then with other content
	e.ingest(source(helsinki, "o-1", "card", 2500, hel(2026, 7, 1, 12, 0)))
	rep = mustGet[report](e, reportPath(helsinki, "day", "2026-07-01", "2026-07-01"), helsinki)
	checkArithmetic(t, rep)
	if rep.Status != "blocked_stale" || rep.AdjustedRows != nil || strings.Join(warningCodes(rep), ",") != "source_changed_after_correction" {
		t.Fatalf("changed: %v %+v", rep.Status, rep.Warnings)
	}
	if w := rep.Warnings[0]; w.CorrectionID == nil || *w.CorrectionID != rep.AppliedCorrectionIDs[0] {
		t.Fatalf("warning %+v", w)
	}
	if reflect.DeepEqual(rep.CurrentSourceFingerprint, fp) {
		t.Fatal("source fingerprint did not change")
	}
	// undo clears the block
	up := mustPost[preview](e, r+"/payment-corrections/preview", helsinki, previewBody("undo", nil))
	if a := post[result](e, r+"/payment-corrections/undo", helsinki, writeBody(up, domain.NewID())); a.Status != 200 || a.Data.Report.Status != "ready" {
		t.Fatalf("undo: %d %s", a.Status, a.Raw)
	}
}

func TestLedgerIsAppendOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	correctionDay(e)
	r := base(helsinki)
	pv := mustPost[preview](e, r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))
	if a := post[json.RawMessage](e, r+"/payment-corrections/apply", helsinki, writeBody(pv, domain.NewID())); a.Status != 200 {
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
	pv := mustPost[preview](e, r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash"))
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
	if a := e.refusal(base(other)+"/payment-corrections/preview", other, previewBody("correct", "cash")); a.Status != http.StatusNotFound {
		t.Fatalf("other restaurant's source: %d", a.Status)
	}
	if a := e.refusal(r+"/payment-corrections/preview", other, previewBody("correct", "cash")); a.Status != http.StatusNotFound {
		t.Fatalf("path outside the context: %d", a.Status)
	}
	// the workspace takes the report's month rule and the 31-date window
	for _, q := range []string{
		"scope=month&start_date=2026-06-15&end_date=2026-07-01",
		"scope=day&start_date=2026-07-01&end_date=2026-07-02",
		"scope=month&start_date=2026-07-01&end_date=2026-07-10&query=",
		"scope=month&start_date=2026-07-01&end_date=2026-07-10&query=" + strings.Repeat("q", 256),
	} {
		if a := e.refusal(r+"/payment-correction-workspace?"+q, helsinki, nil); a.Status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", q, a.Status, a.Raw)
		}
	}
	// The calendar has no year 0: such a date is refused before any query
	// (Postgres answered it with an error, which was a 500), on every read
	// that takes dates.
	for _, path := range []string{"/payment-report?scope=day&", "/payment-report?scope=month&", "/accounting-summary?scope=day&", "/refunds?",
		"/payment-correction-workspace?scope=day&"} {
		q := path + "start_date=0000-01-01&end_date=0000-01-01"
		if a := e.refusal(r+q, helsinki, nil); a.Status != http.StatusBadRequest || !strings.Contains(a.Message, "start_date") {
			t.Errorf("%s: %d %s", q, a.Status, a.Raw)
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
	previewMessage := func(field, raw string) string {
		b := previewBody("correct", "cash")
		delete(b, field)
		body := strings.Replace(string(mustJSON(t, b)), "{", `{"`+field+`":`+raw+`,`, 1)
		status, out := e.do(http.MethodPost, r+"/payment-corrections/preview", helsinki, strings.NewReader(body), nil)
		if status != http.StatusBadRequest {
			t.Fatalf("%s=%s: %d %s", field, raw, status, out)
		}
		return servicetest.Decode[json.RawMessage](t, status, out).Message
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
		if got := previewMessage(tc.field, tc.raw); got != tc.want {
			t.Errorf("%s=%s: %q, want %q", tc.field, tc.raw, got, tc.want)
		}
	}
	apply := writeBody(mustPost[preview](e, r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash")), "6e000000-0000-4000-8000-000000000001")
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
		if a := e.refusal(r+"/payment-corrections/apply", helsinki, b); a.Status != http.StatusBadRequest || a.Message != tc.want {
			t.Errorf("%s: %d %s, want %q", field, a.Status, a.Raw, tc.want)
		}
	}
}
