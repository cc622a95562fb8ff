package grants

import (
	"testing"
	"time"
)

// Requests finish out of order: the record keeps each grant's latest minute.
func TestUsageKeepsTheLatestMinute(t *testing.T) {
	u := NewUsage("http://127.0.0.1:1", nil, nil)
	at := time.Date(2026, 11, 27, 10, 5, 30, 0, time.UTC)
	u.Record("g", at)
	u.Record("g", at.Add(-time.Minute))
	if got := u.pending["g"]; !got.Equal(at.Truncate(time.Minute)) {
		t.Fatalf("an earlier request replaced the minute: %v", got)
	}
	u.Record("g", at.Add(time.Minute))
	if got := u.pending["g"]; !got.Equal(at.Add(time.Minute).Truncate(time.Minute)) {
		t.Fatalf("a later request did not move the minute: %v", got)
	}
}
