package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"partnerapi.dev/pkg/servicetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var uuidRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`)

// stable replaces the random ids of ledger writes with numbered ones in the
// order they appear, so the files stay byte-identical between runs.
type stable struct {
	keep map[string]bool
	seen map[string]string
}

func (s *stable) apply(raw []byte) []byte {
	return uuidRe.ReplaceAllFunc(raw, func(id []byte) []byte {
		if s.keep[string(id)] {
			return id
		}
		if v, ok := s.seen[string(id)]; ok {
			return []byte(v)
		}
		v := fmt.Sprintf("00000000-0000-4000-8000-%012d", len(s.seen)+1)
		s.seen[string(id)] = v
		return []byte(v)
	})
}

func golden(t *testing.T, s *stable, name string, raw []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	pretty, _ := json.MarshalIndent(v, "", "  ")
	pretty = append(s.apply(pretty), '\n')
	path := filepath.Join("..", "..", "testdata", "worked-example", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestWorkedExample -update)", err)
	}
	if !bytes.Equal(want, pretty) {
		t.Errorf("%s differs from %s:\n%s", name, path, pretty)
	}
}

// TestWorkedExample is the day docs/accounting.md walks through: the
// report, the workspace, a preview, the apply, the report again and the
// undo; the answers are the golden files the document quotes.
func TestWorkedExample(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	correctionDay(e)
	s := &stable{keep: map[string]bool{helsinki: true}, seen: map[string]string{}}
	r := base(helsinki)
	must := func(status int, raw []byte) []byte {
		t.Helper()
		if status != 200 {
			t.Fatalf("%d %s", status, raw)
		}
		return raw
	}
	get := func(path string) []byte { return must(e.do("GET", path, helsinki, nil, nil)) }
	post := func(path string, body any) []byte {
		raw, _ := json.Marshal(body)
		return must(e.do("POST", path, helsinki, bytes.NewReader(raw), nil))
	}
	golden(t, s, "1-report", get(reportPath(helsinki, "day", "2026-07-01", "2026-07-01")))
	golden(t, s, "2-workspace", get(r+"/payment-correction-workspace?scope=day&start_date=2026-07-01&end_date=2026-07-01&query=rh-o-1"))
	raw := post(r+"/payment-corrections/preview", previewBody("correct", "cash"))
	golden(t, s, "3-preview", raw)
	pv := servicetest.Decode[preview](t, 200, raw).Data
	golden(t, s, "4-apply", post(r+"/payment-corrections/apply", writeBody(pv, "6f1c1f4e-1111-4a4a-8b8b-0000000000a1")))
	golden(t, s, "5-report", get(reportPath(helsinki, "day", "2026-07-01", "2026-07-01")))
	raw = post(r+"/payment-corrections/preview", previewBody("undo", nil))
	golden(t, s, "6-undo", post(r+"/payment-corrections/undo", writeBody(servicetest.Decode[preview](t, 200, raw).Data, "6f1c1f4e-1111-4a4a-8b8b-0000000000a2")))
	golden(t, s, "7-summary", get(r+"/accounting-summary?scope=day&start_date=2026-07-01&end_date=2026-07-01"))
}
