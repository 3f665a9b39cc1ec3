package cronexpr_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/cronexpr"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		panic(err)
	}
	return t
}

func in(zone, s string) time.Time {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		panic(err)
	}
	t, err := time.ParseInLocation(time.DateTime, s, loc)
	if err != nil {
		panic(err)
	}
	return t
}

// fires lists the first n fire times after from.
func fires(t *testing.T, expr, zone string, from time.Time, n int) []time.Time {
	t.Helper()
	s, err := cronexpr.Parse(expr, zone)
	require.NoError(t, err, expr)
	var out []time.Time
	at := from
	for range n {
		at = s.Next(at)
		require.False(t, at.IsZero(), "%s: no next fire after %s", expr, out)
		out = append(out, at)
	}
	return out
}

func TestForms(t *testing.T) {
	from := utc("2026-03-04 10:17:30") // a Wednesday
	cases := []struct {
		expr string
		want []string
	}{
		{"*/5 * * * *", []string{"2026-03-04 10:20:00", "2026-03-04 10:25:00"}},
		{"0 0 1 * * ?", []string{"2026-03-05 01:00:00", "2026-03-06 01:00:00"}},    // the spec's default: 1 AM daily
		{"30 15 10 ? * 2", []string{"2026-03-09 10:15:30", "2026-03-16 10:15:30"}}, // Quartz: 2 = Monday
		{"0 0 9 ? * 1,7", []string{"2026-03-07 09:00:00", "2026-03-08 09:00:00"}},  // Saturday and Sunday
		{"0 0 9 ? * 2-6", []string{"2026-03-05 09:00:00", "2026-03-06 09:00:00", "2026-03-09 09:00:00"}},
		{"0 0 9 ? * MON-FRI", []string{"2026-03-05 09:00:00", "2026-03-06 09:00:00", "2026-03-09 09:00:00"}},
		{"0 9 * * 1", []string{"2026-03-09 09:00:00"}},                           // Unix: 1 = Monday
		{"0 9 * * 0,6", []string{"2026-03-07 09:00:00", "2026-03-08 09:00:00"}},  // Unix: Saturday and Sunday
		{"0 0 1,15 * 3", []string{"2026-03-11 00:00:00", "2026-03-15 00:00:00"}}, // Unix: day 1 or 15, or a Wednesday
		{"0 0 0 15 * ?", []string{"2026-03-15 00:00:00", "2026-04-15 00:00:00"}}, // Quartz: the 15th
		{"@hourly", []string{"2026-03-04 11:00:00", "2026-03-04 12:00:00"}},
		{"@daily", []string{"2026-03-05 00:00:00"}},
		{"@weekly", []string{"2026-03-08 00:00:00"}},
		{"@monthly", []string{"2026-04-01 00:00:00"}},
		{"@yearly", []string{"2027-01-01 00:00:00"}},
		{"@every 90s", []string{"2026-03-04 10:19:00", "2026-03-04 10:20:30"}},
	}
	for _, c := range cases {
		got := fires(t, c.expr, "", from, len(c.want))
		var want []time.Time
		for _, w := range c.want {
			want = append(want, utc(w))
		}
		assert.Equal(t, want, got, c.expr)
	}
}

func TestTimeZone(t *testing.T) {
	got := fires(t, "0 0 9 * * ?", "Europe/Berlin", utc("2026-01-10 12:00:00"), 1)
	assert.Equal(t, utc("2026-01-11 08:00:00"), got[0].UTC(), "9 AM in Berlin is 8 AM UTC in winter")
	assert.Equal(t, "Europe/Berlin", got[0].Location().String())
}

// A slot in a spring-forward gap fires once, at the first instant after
// the gap; a wall time that repeats in a fall-back overlap fires once, at
// its first occurrence.
func TestDaylightSaving(t *testing.T) {
	// Berlin, 2026-03-29: 02:00 CET becomes 03:00 CEST.
	got := fires(t, "30 2 * * *", "Europe/Berlin", in("Europe/Berlin", "2026-03-28 12:00:00"), 3)
	assert.Equal(t, []time.Time{in("Europe/Berlin", "2026-03-29 03:00:00"), in("Europe/Berlin", "2026-03-30 02:30:00"),
		in("Europe/Berlin", "2026-03-31 02:30:00")}, got, "the 02:30 of the gap fires at 03:00, once")
	assert.Equal(t, utc("2026-03-29 01:00:00"), got[0].UTC())

	got = fires(t, "*/20 * * * *", "Europe/Berlin", in("Europe/Berlin", "2026-03-29 01:30:00"), 4)
	assert.Equal(t, []time.Time{in("Europe/Berlin", "2026-03-29 01:40:00"), in("Europe/Berlin", "2026-03-29 03:00:00"),
		in("Europe/Berlin", "2026-03-29 03:20:00"), in("Europe/Berlin", "2026-03-29 03:40:00")}, got,
		"the gap's slots 02:00, 02:20, 02:40 and 03:00 are one fire at 03:00")

	// Berlin, 2026-10-25: 03:00 CEST becomes 02:00 CET; 02:00-02:59 occurs twice.
	first := utc("2026-10-25 00:30:00") // 02:30 CEST
	got = fires(t, "30 2 * * *", "Europe/Berlin", in("Europe/Berlin", "2026-10-24 12:00:00"), 2)
	assert.Equal(t, first, got[0].UTC(), "the repeated 02:30 fires at its first occurrence")
	assert.Equal(t, in("Europe/Berlin", "2026-10-26 02:30:00"), got[1], "and not at its second")

	got = fires(t, "0 * * * *", "Europe/Berlin", in("Europe/Berlin", "2026-10-25 01:30:00"), 3)
	assert.Equal(t, []time.Time{utc("2026-10-25 00:00:00"), utc("2026-10-25 02:00:00"), utc("2026-10-25 03:00:00")},
		[]time.Time{got[0].UTC(), got[1].UTC(), got[2].UTC()}, "hourly: 02:00 CEST, then 03:00 CET, skipping the second 02:00")

	// From inside the second pass of the overlap, nothing of the first
	// pass fires again.
	secondPass := utc("2026-10-25 01:10:00") // 02:10 CET
	got = fires(t, "*/30 * * * *", "Europe/Berlin", secondPass, 2)
	assert.Equal(t, []time.Time{utc("2026-10-25 02:00:00"), utc("2026-10-25 02:30:00")}, []time.Time{got[0].UTC(), got[1].UTC()})
}

func TestBadExpressions(t *testing.T) {
	cases := []struct {
		expr, zone, field, says string
	}{
		{"", "", "", "empty"},
		{"* * *", "", "", "3 fields"},
		{"0 0 1 * * ? 2027", "", "year", "not supported"},
		{"0 0 1 L * ?", "", "day-of-month", "L (last)"},
		{"0 0 1 15W * ?", "", "day-of-month", "W (nearest weekday)"},
		{"0 0 1 ? * 6#3", "", "day-of-week", "# (nth weekday)"},
		{"0 0 1 ? * 6L", "", "day-of-week", "L (last)"},
		{"0 0 1 ? * 8", "", "day-of-week", "1 (Sunday) to 7 (Saturday)"},
		{"0 0 1 ? * 0", "", "day-of-week", "1 (Sunday) to 7 (Saturday)"},
		{"0 0 1 15 * 2", "", "day-of-month", "both restricted"},
		{"0 ? 1 * * *", "", "minute", "? is allowed only"},
		{"61 * * * *", "", "minute", "above maximum"},
		{"0 25 * * *", "", "hour", "above maximum"},
		{"0 0 * * 7", "", "day-of-week", "above maximum"},
		{"0 0 * FOO *", "", "month", ""},
		{"0 0 30 2 *", "", "", "never fires"},
		{"@every 500ms", "", "", "whole number of seconds"},
		{"@every soon", "", "", "duration"},
		{"@fortnightly", "", "", "unrecognized"},
		{"CRON_TZ=Europe/Berlin 0 9 * * *", "", "", "schedule's zone"},
		{"0 9 * * *", "Mars/Olympus", "", "unknown time zone"},
		{"0 9 * * *", "Local", "", "differs from node to node"},
	}
	for _, c := range cases {
		_, err := cronexpr.Parse(c.expr, c.zone)
		require.Error(t, err, c.expr)
		var e *cronexpr.Error
		require.True(t, errors.As(err, &e), "%s: an *cronexpr.Error", c.expr)
		assert.Equal(t, c.field, e.Field, "%s: the field at fault (%v)", c.expr, err)
		assert.Contains(t, err.Error(), c.says, c.expr)
		assert.Contains(t, err.Error(), `"`+c.expr+`"`, "the error names the expression")
	}
}

func TestStringAndLocation(t *testing.T) {
	s, err := cronexpr.Parse(" 0 0 1 * * ? ", "America/New_York")
	require.NoError(t, err)
	assert.Equal(t, "0 0 1 * * ?", s.String())
	assert.Equal(t, "America/New_York", s.Location().String())
	s, err = cronexpr.Parse("@hourly", "")
	require.NoError(t, err)
	assert.Equal(t, time.UTC, s.Location())
}
