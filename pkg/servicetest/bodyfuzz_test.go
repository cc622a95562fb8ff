package servicetest

import "testing"

func TestLeakedIgnoresWhatTheRequestSent(t *testing.T) {
	for _, c := range []struct{ answer, body, want string }{
		{`{"message":"Field \"A0gorm\" is not allowed here."}`, `{"A0gorm":true}`, ""},
		{`{"message":"gorm: record not found"}`, `{"name":"x"}`, "gorm"},
		{`{"message":"Field \"xpgx\" is not allowed; pq: broken"}`, `{"xpgx":1}`, "pq:"},
		{`{"message":"The name is too long."}`, `{"name":"x"}`, ""},
	} {
		if got := leaked([]byte(c.answer), c.body); got != c.want {
			t.Errorf("leaked(%s, %s) = %q, want %q", c.answer, c.body, got, c.want)
		}
	}
}
