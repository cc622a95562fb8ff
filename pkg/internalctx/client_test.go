package internalctx_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"partnerapi.dev/pkg/internalctx"
)

// GetJSON and PostJSON sign the context, decode 2xx, and tell 404 from an
// outage.
func TestGetJSON(t *testing.T) {
	keys, err := internalctx.ParseKeys("k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ic, err := keys.Verify(r.Header.Get(internalctx.Header))
		switch {
		case err != nil || ic.GrantID != "g1":
			w.WriteHeader(http.StatusUnauthorized)
		case r.URL.Path == "/echo" && r.Method == http.MethodPost && r.Header.Get("Content-Type") == "application/json":
			_, _ = io.Copy(w, r.Body)
		case r.URL.Path == "/accepted" && r.Method == http.MethodPost:
			w.WriteHeader(http.StatusNoContent)
		case r.URL.Path == "/found":
			_, _ = w.Write([]byte(`{"name":"x"}`))
		case r.URL.Path == "/broken":
			_, _ = w.Write([]byte(`{`))
		case r.URL.Path == "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	who := internalctx.Context{ClientID: "c", GrantID: "g1", RequestID: "r"}
	var out struct{ Name string }
	if err := internalctx.GetJSON(ctx, srv.Client(), keys, srv.URL+"/found", who, &out); err != nil || out.Name != "x" {
		t.Fatalf("found: %v %+v", err, out)
	}
	for path, want := range map[string]error{"/missing": internalctx.ErrNotFound, "/down": internalctx.ErrUnavailable, "/broken": internalctx.ErrUnavailable} {
		if err := internalctx.GetJSON(ctx, srv.Client(), keys, srv.URL+path, who, &out); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", path, err, want)
		}
	}
	if err := internalctx.PostJSON(ctx, srv.Client(), keys, srv.URL+"/echo", who, map[string]string{"name": "y"}, &out); err != nil || out.Name != "y" {
		t.Fatalf("post: %v %+v", err, out)
	}
	if err := internalctx.PostJSON(ctx, srv.Client(), keys, srv.URL+"/accepted", who, map[string]string{}, nil); err != nil {
		t.Fatalf("post without answer: %v", err)
	}
	if err := internalctx.PostJSON(ctx, srv.Client(), keys, srv.URL+"/down", who, map[string]string{}, nil); !errors.Is(err, internalctx.ErrUnavailable) {
		t.Errorf("post to an outage: %v", err)
	}
	if err := internalctx.GetJSON(ctx, srv.Client(), keys, "http://127.0.0.1:1/x", who, &out); !errors.Is(err, internalctx.ErrUnavailable) {
		t.Errorf("unreachable: %v", err)
	}
	if err := internalctx.GetJSON(ctx, srv.Client(), keys, srv.URL+"/found", internalctx.Context{GrantID: "other"}, &out); !errors.Is(err, internalctx.ErrUnavailable) {
		t.Errorf("refused context: %v", err)
	}
}
