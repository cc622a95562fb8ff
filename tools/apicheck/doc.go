// Package apicheck holds the tests that try the served OpenAPI document the
// way a partner would: generate a Go client with oapi-codegen and with ogen
// (pinned, run through the Go module proxy), compile it, and lint the
// document with Redocly's recommended rules (pinned through npm), for every
// menu naming set the gateway can serve. The client that oapi-codegen
// generates from naming set A goes into tools/partnerclient (make
// partner-client; not committed) and is called by the end-to-end test.
package apicheck
