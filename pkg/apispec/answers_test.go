package apispec

import (
	"encoding/json"
	"testing"
)

// TestInt64Format: OpenAPI's int64 holds what a signed 64-bit integer holds.
func TestInt64Format(t *testing.T) {
	for value, ok := range map[json.Number]bool{"0": true, "-9223372036854775808": true, "9223372036854775807": true,
		"9223372036854775808": false, "1.5": false} {
		if err := int64Format(value); (err == nil) != ok {
			t.Errorf("%s: %v, want ok %v", value, err, ok)
		}
	}
}
