// Package apispec holds the OpenAPI 3.1 document of the public Partner API,
// embedded so the gateway can serve it and every service's tests can check
// their responses against it (ValidateResponse).
//
// openapi.yaml is the source; openapi.json is generated from it with
// `go generate ./apispec` (run in pkg/) and checked fresh by the tests.
package apispec

//go:generate go run ./internal/yaml2json openapi.yaml openapi.json

import (
	"context"
	_ "embed"
	"fmt"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

//go:embed openapi.json
var document []byte

// JSON returns the OpenAPI document as served at GET /v1/openapi.json. The
// caller must not modify the slice.
func JSON() []byte { return document }

var (
	loadOnce sync.Once
	loaded   *openapi3.T
	loadErr  error
)

// Load parses the embedded document once. The result is shared: do not
// modify it.
func Load() (*openapi3.T, error) {
	loadOnce.Do(func() {
		l := openapi3.NewLoader()
		loaded, loadErr = l.LoadFromData(document)
		if loadErr == nil {
			loadErr = loaded.Validate(context.Background())
		}
		if loadErr != nil {
			loadErr = fmt.Errorf("apispec: embedded OpenAPI document: %w", loadErr)
		}
	})
	return loaded, loadErr
}
