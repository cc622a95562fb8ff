package api_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"testing"

	"partnerapi.dev/pkg/servicetest"
)

// FuzzWriteBodies sends the payment-correction writes, against a real
// database, with arbitrary text in one string of a valid body or an
// arbitrary body (servicetest.FuzzWriteBodies): never a 5xx, always the
// envelope, no internals, no quoted input. make fuzz runs it.
func FuzzWriteBodies(f *testing.F) {
	e := newEnv(f)
	writes := correctionWrites(e)
	servicetest.FuzzWriteBodies(f, writes, func(t *testing.T, method, path string, body []byte) (int, []byte) {
		e.use(t)
		return e.do(method, path, helsinki, bytes.NewReader(body), nil)
	})
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// correctionWrites are the payment-correction writes with valid bodies
// over a corrected day's sources.
func correctionWrites(e *env) []servicetest.Write {
	correctionDay(e)
	r := base(helsinki)
	apply := writeBody(mustPost[preview](e, r+"/payment-corrections/preview", helsinki, previewBody("correct", "cash")), "{KEY}")
	// An undo names no method: the body of the apply, as an undo.
	undo := maps.Clone(apply)
	undo["action"] = "undo"
	delete(undo, "toMethodKey")
	return []servicetest.Write{
		{Method: http.MethodPost, Path: r + "/payment-corrections/preview", Body: string(mustJSON(e.t, previewBody("correct", "cash")))},
		{Method: http.MethodPost, Path: r + "/payment-corrections/apply", Body: string(mustJSON(e.t, apply))},
		{Method: http.MethodPost, Path: r + "/payment-corrections/undo", Body: string(mustJSON(e.t, undo))},
	}
}

// TestWrongTypesAreNamed: a value of the wrong JSON type anywhere in a
// correction body is a 400 naming its path as the body spells it.
func TestWrongTypesAreNamed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	servicetest.CheckWrongTypes(t, correctionWrites(e), func(t *testing.T, method, path string, body []byte) (int, []byte) {
		return e.do(method, path, helsinki, bytes.NewReader(body), nil)
	})
}
