package bizdate_test

import (
	"testing"
	"time"

	"partnerapi.dev/pkg/bizdate"
)

func TestOf(t *testing.T) {
	hel, _ := time.LoadLocation("Europe/Helsinki")
	ny, _ := time.LoadLocation("America/New_York")
	cases := []struct {
		name    string
		instant string
		loc     *time.Location
		dsh     int
		want    string
	}{
		{"before cutoff belongs to previous day", "2026-03-10T01:59:00Z", hel, 4, "2026-03-09"}, // 03:59 local
		{"at cutoff starts the day", "2026-03-10T02:00:00Z", hel, 4, "2026-03-10"},              // 04:00 local
		{"midnight start", "2026-03-09T22:00:00Z", hel, 0, "2026-03-10"},
		{"UTC date differs from local", "2026-03-10T23:30:00Z", hel, 0, "2026-03-11"},
		{"month and year boundary", "2027-01-01T03:00:00Z", hel, 6, "2026-12-31"},
		// Helsinki springs forward 2026-03-29 03:00 -> 04:00.
		{"spring forward, before cutoff", "2026-03-29T00:30:00Z", hel, 3, "2026-03-28"}, // 02:30 EET
		{"spring forward, after gap", "2026-03-29T01:00:00Z", hel, 3, "2026-03-29"},     // 04:00 EEST
		// Helsinki falls back 2026-10-25 04:00 -> 03:00: 03:30 happens twice.
		{"fall back, first 03:30", "2026-10-25T00:30:00Z", hel, 4, "2026-10-24"},
		{"fall back, second 03:30", "2026-10-25T01:30:00Z", hel, 4, "2026-10-24"},
		{"fall back, 04:00 after", "2026-10-25T02:00:00Z", hel, 4, "2026-10-25"},
		// New York springs forward 2026-03-08 02:00 -> 03:00.
		{"NY spring forward", "2026-03-08T07:30:00Z", ny, 3, "2026-03-08"}, // 03:30 EDT
		{"NY before", "2026-03-08T06:59:00Z", ny, 3, "2026-03-07"},         // 01:59 EST
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			at, _ := time.Parse(time.RFC3339, c.instant)
			if got := bizdate.Of(at, c.loc, c.dsh).String(); got != c.want {
				t.Fatalf("Of(%s) = %s, want %s", c.instant, got, c.want)
			}
		})
	}
}

func TestStartIsInverseOfOf(t *testing.T) {
	hel, _ := time.LoadLocation("Europe/Helsinki")
	ny, _ := time.LoadLocation("America/New_York")
	for _, loc := range []*time.Location{hel, ny, time.UTC} {
		for dsh := range 24 {
			d := bizdate.Date{Year: 2026, Month: 3, Day: 1}
			for range 300 {
				start := d.Start(loc, dsh)
				if got := bizdate.Of(start, loc, dsh); got != d {
					t.Fatalf("%s dsh %d: Of(Start(%s)) = %s", loc, dsh, d, got)
				}
				if got := bizdate.Of(start.Add(-time.Nanosecond), loc, dsh); got == d {
					t.Fatalf("%s dsh %d: instant before Start(%s) is still %s", loc, dsh, d, got)
				}
				d = d.AddDays(1)
			}
		}
	}
}

func TestParse(t *testing.T) {
	for _, bad := range []string{"2026-1-01", "2026-02-30", "2026-02-29", "0000-01-01", "0000-12-31", "20260101", "2026-01-01T00:00:00Z", "", "2026-13-01", "-001-01-01", "+2026-01-1"} {
		if _, err := bizdate.Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	d, err := bizdate.Parse("2024-02-29")
	if err != nil || d.String() != "2024-02-29" {
		t.Fatal(d, err)
	}
	end, _ := bizdate.Parse("2024-03-30")
	if n := d.DaysInclusive(end); n != 31 {
		t.Fatalf("days = %d", n)
	}
	if n := end.DaysInclusive(d); n != 0 {
		t.Fatalf("reversed = %d", n)
	}
	first, _ := bizdate.Parse("0001-01-01")
	last, _ := bizdate.Parse("9999-12-31")
	if n := first.DaysInclusive(last); n != 3652059 {
		t.Fatalf("whole calendar = %d days", n)
	}
}
