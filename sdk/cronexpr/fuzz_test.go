package cronexpr_test

import (
	"testing"
	"time"

	"github.com/ratchet-go/ratchet/sdk/cronexpr"
)

// FuzzParse: any expression and zone either parse or fail with an error,
// never a panic; a schedule that parses fires strictly after the time
// asked, on a whole second, or never (zero).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "0 0 9 ? * MON-FRI", "@every 90s", "@daily", "0 30 2 * * ?", "0 0 1 * * ?",
		"59 23 31 12 *", "* * * * * *", "0 0 L * *", "1-60/0 * * * *", "@every -1s", "", "TZ=Europe/Paris 0 9 * * *"} {
		f.Add(s, "")
		f.Add(s, "Europe/Berlin")
	}
	f.Add("0 2 * * *", "America/Sao_Paulo")
	f.Add("30 2 * * *", "America/New_York")
	f.Add("*/7 * * * *", "Nowhere/Town")
	after := time.Date(2026, 3, 29, 0, 59, 59, 500_000_000, time.UTC)
	f.Fuzz(func(t *testing.T, expr, zone string) {
		s, err := cronexpr.Parse(expr, zone)
		if err != nil {
			return
		}
		next := s.Next(after)
		if next.IsZero() {
			return
		}
		if !next.After(after) {
			t.Fatalf("%q in %q: Next(%s) = %s, not after", expr, zone, after, next)
		}
		if next.Nanosecond() != 0 {
			t.Fatalf("%q in %q: Next = %s, not a whole second", expr, zone, next)
		}
		if again := s.Next(next); !again.IsZero() && !again.After(next) {
			t.Fatalf("%q in %q: Next(%s) = %s, not after", expr, zone, next, again)
		}
	})
}
