package apispec

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// checker finds operations by method and concrete path, whatever host a
// test server runs on, and checks answers against one document.
type checker struct {
	router  routers.Router
	answers *answerSchemas
}

// newChecker serves doc, parsed from data.
func newChecker(doc *openapi3.T, data []byte) (*checker, error) {
	local := *doc
	local.Servers = openapi3.Servers{{URL: "/"}}
	router, err := gorillamux.NewRouter(&local)
	if err != nil {
		return nil, err
	}
	answers, err := newAnswerSchemas(data)
	if err != nil {
		return nil, err
	}
	return &checker{router: router, answers: answers}, nil
}

var (
	documentChecker = sync.OnceValues(func() (*checker, error) {
		doc, err := Load()
		if err != nil {
			return nil, err
		}
		return newChecker(doc, document)
	})
	// setBChecker checks against the document as a deployment serving menu
	// naming set B serves it (NamingSetB).
	setBChecker = sync.OnceValues(func() (*checker, error) {
		data := NamingSetB()
		doc, err := openapi3.NewLoader().LoadFromData(data)
		if err != nil {
			return nil, err
		}
		if err := doc.Validate(context.Background()); err != nil {
			return nil, err
		}
		return newChecker(doc, data)
	})
)

// ValidateResponseSetB is ValidateResponse against the document as a
// deployment serving menu naming set B serves it (NamingSetB).
func ValidateResponseSetB(t testing.TB, method, path string, query url.Values, status int, header http.Header, body []byte) {
	t.Helper()
	c, err := setBChecker()
	if err == nil {
		err = c.checkResponse(method, path, query, status, header, body)
	}
	if err != nil {
		t.Errorf("response of %s %s does not match the naming set B document: %v\nbody: %s", method, path, err, truncate(body))
	}
}

// ValidateResponse fails t unless the response (status, headers, body) of
// method on path (a concrete path such as /v1/restaurants/<uuid>/orders, with
// its query) is one the OpenAPI document allows for that operation.
// Services call it from their handler tests with what their server answered.
func ValidateResponse(t testing.TB, method, path string, query url.Values, status int, header http.Header, body []byte) {
	t.Helper()
	if err := CheckResponse(method, path, query, status, header, body); err != nil {
		t.Errorf("response of %s %s does not match the OpenAPI document: %v\nbody: %s", method, path, err, truncate(body))
	}
}

// CheckResponse is ValidateResponse returning the mismatch as an error.
func CheckResponse(method, path string, query url.Values, status int, header http.Header, body []byte) error {
	c, err := documentChecker()
	if err != nil {
		return err
	}
	return c.checkResponse(method, path, query, status, header, body)
}

func (c *checker) checkResponse(method, path string, query url.Values, status int, header http.Header, body []byte) error {
	u := &url.URL{Path: path, RawQuery: query.Encode()}
	req, err := http.NewRequest(method, u.String(), nil)
	if err != nil {
		return err
	}
	route, _, err := c.router.FindRoute(req)
	if err != nil {
		return err
	}
	return c.answers.check(route.Path, route.Method, status, header, body)
}

// CheckRequest validates a request (parameters and body) against the
// document, for tests of clients and of request bounds.
func CheckRequest(method, path string, query url.Values, header http.Header, body []byte) error {
	c, err := documentChecker()
	if err != nil {
		return err
	}
	u := &url.URL{Path: path, RawQuery: query.Encode()}
	req, err := http.NewRequest(method, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		return err
	}
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	})
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// RequestSchema is the JSON body schema of the operation a request with
// method and concrete path reaches.
func RequestSchema(method, path string) (*openapi3.Schema, error) {
	c, err := documentChecker()
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(method, path, nil)
	if err != nil {
		return nil, err
	}
	route, _, err := c.router.FindRoute(req)
	if err != nil {
		return nil, err
	}
	op := route.Operation
	if op.RequestBody == nil || op.RequestBody.Value == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
		return nil, fmt.Errorf("%s %s has no JSON body", method, path)
	}
	s := op.RequestBody.Value.Content.Get("application/json").Schema
	if s == nil || s.Value == nil {
		return nil, fmt.Errorf("%s %s: the body has no schema", method, path)
	}
	return s.Value, nil
}
