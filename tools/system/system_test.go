package system

import (
	"encoding/base64"
	"testing"
)

func TestTokenClaims(t *testing.T) {
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"u1","client_id":"c1","gid":"g1","scope":"a b"}`))
	c, err := TokenClaims("h." + payload + ".s")
	if err != nil || c.Subject != "u1" || c.ClientID != "c1" || c.GrantID != "g1" || c.Scope != "a b" {
		t.Fatalf("%+v %v", c, err)
	}
	if _, err := TokenClaims("h." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"u1"}`)) + ".s"); err == nil {
		t.Fatal("a token without gid was accepted")
	}
}
