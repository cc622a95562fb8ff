// Package specgen turns the YAML source of the OpenAPI document into the
// embedded JSON (anchors and merge keys expanded, keys sorted, indented).
package specgen

import (
	"bytes"
	"encoding/json"

	"github.com/oasdiff/yaml"
)

// Convert returns the JSON form of the YAML source.
func Convert(src []byte) ([]byte, error) {
	j, err := yaml.YAMLToJSON(src)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	return Encode(v)
}

// Encode writes a decoded document the way Convert does.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
