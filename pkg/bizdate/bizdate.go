// Package bizdate computes business dates: the calendar date a moment belongs
// to for a place whose business day starts at a given local hour.
package bizdate

import (
	"fmt"
	"time"
)

// Date is a calendar date with no time zone.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// Of returns the business date of instant t for a place in loc whose day
// starts at dayStartHour (0–23): the local wall-clock time minus dayStartHour
// hours, taken as a date. Wall-clock arithmetic keeps DST transitions from
// moving the cutoff.
func Of(t time.Time, loc *time.Location, dayStartHour int) Date {
	local := t.In(loc)
	y, m, d := local.Date()
	if local.Hour() < dayStartHour {
		y, m, d = time.Date(y, m, d-1, 12, 0, 0, 0, time.UTC).Date()
	}
	return Date{y, m, d}
}

// Start returns the instant the business date d begins in loc: d at
// dayStartHour local time. When that wall time does not exist (a DST gap) it
// is the first instant after the gap.
func (d Date) Start(loc *time.Location, dayStartHour int) time.Time {
	t := time.Date(d.Year, d.Month, d.Day, dayStartHour, 0, 0, 0, loc)
	if t.Hour() < dayStartHour && t.Day() == d.Day {
		// time.Date normalised a skipped hour backwards; move past the gap.
		return t.Add(time.Hour)
	}
	// When the wall time happens twice (clocks set back), the day starts at
	// the first occurrence.
	for _, back := range []time.Duration{30 * time.Minute, time.Hour} {
		if earlier := t.Add(-back); sameWallClock(earlier, t) {
			return earlier
		}
	}
	return t
}

func sameWallClock(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd && a.Hour() == b.Hour() && a.Minute() == b.Minute()
}

// ParseError is Parse's error: Text is not a YYYY-MM-DD date.
type ParseError struct{ Text string }

func (e *ParseError) Error() string { return fmt.Sprintf("%q is not a YYYY-MM-DD date", e.Text) }

// Parse reads a strict YYYY-MM-DD date from 0001-01-01 on: the calendar
// (and Postgres) has no year 0, so 0000-… is no date.
func Parse(s string) (Date, error) {
	if len(s) != 10 {
		return Date{}, &ParseError{Text: s}
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Year() < 1 {
		return Date{}, &ParseError{Text: s}
	}
	return FromTime(t), nil
}

// FromTime returns the date part of t in its own location.
func FromTime(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

// String formats YYYY-MM-DD.
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day) }

// MarshalText encodes YYYY-MM-DD.
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText decodes YYYY-MM-DD.
func (d *Date) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Time returns midnight UTC of d, for storing in a DATE column.
func (d Date) Time() time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }

// AddDays returns d moved by n days.
func (d Date) AddDays(n int) Date { return FromTime(d.Time().AddDate(0, 0, n)) }

// Before reports whether d is earlier than o.
func (d Date) Before(o Date) bool { return d.Time().Before(o.Time()) }

// After reports whether d is later than o.
func (d Date) After(o Date) bool { return d.Time().After(o.Time()) }

// DaysInclusive counts the dates from d to end, both included (0 when end is
// before d), however far apart: from Unix seconds, since a time.Duration
// overflows after 292 years.
func (d Date) DaysInclusive(end Date) int64 {
	n := (end.Time().Unix()-d.Time().Unix())/86400 + 1
	return max(n, 0)
}
