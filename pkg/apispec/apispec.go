// Package apispec holds the OpenAPI 3.1 document of the public Partner API,
// embedded so the gateway can serve it and every service's tests can check
// their responses against it (see ValidateResponse in validate.go).
package apispec

import _ "embed"

//go:embed openapi.json
var document []byte

// JSON returns the OpenAPI document as served at GET /v1/openapi.json. The
// caller must not modify the slice.
func JSON() []byte { return document }
