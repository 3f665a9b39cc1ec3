package cronexpr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	robfig "github.com/robfig/cron/v3"
)

// Schedule is a parsed expression in its time zone. It is immutable and
// safe for concurrent use.
type Schedule struct {
	expr  string
	loc   *time.Location
	spec  *robfig.SpecSchedule // the fields, matched against wall time (kept in UTC)
	every time.Duration        // @every: the period; zero otherwise
}

// Error is a malformed expression or time zone. Field names the field at
// fault ("day-of-week"), empty when the whole expression or the zone is.
type Error struct {
	Expr, Zone string
	Field      string
	Value      string // the field's text
	Err        error
}

// Error names the expression, the zone, the field and the problem.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cron expression %q", e.Expr)
	if e.Zone != "" {
		fmt.Fprintf(&b, " in zone %q", e.Zone)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": %s field %q", e.Field, e.Value)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

var (
	unixFields   = []string{"minute", "hour", "day-of-month", "month", "day-of-week"}
	quartzFields = []string{"second", "minute", "hour", "day-of-month", "month", "day-of-week"}
	parser       = robfig.NewParser(robfig.Second | robfig.Minute | robfig.Hour | robfig.Dom | robfig.Month | robfig.Dow | robfig.Descriptor)
)

// Parse parses expr (see the package documentation for the forms) in the
// time zone zone, an IANA name such as "Europe/Berlin"; "" means UTC. The
// error, an *Error, names the expression and the field at fault.
func Parse(expr, zone string) (*Schedule, error) {
	expr = strings.TrimSpace(expr)
	fail := func(field, value string, err error) (*Schedule, error) {
		return nil, &Error{Expr: expr, Zone: zone, Field: field, Value: value, Err: err}
	}
	loc := time.UTC
	switch zone {
	case "", "UTC":
	case "Local":
		return fail("", "", errors.New(`"Local" differs from node to node: name an IANA zone such as "Europe/Berlin"`))
	default:
		l, err := time.LoadLocation(zone)
		if err != nil {
			return fail("", "", fmt.Errorf("unknown time zone: %w", err))
		}
		loc = l
	}
	switch {
	case expr == "":
		return fail("", "", errors.New("empty expression"))
	case strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ="):
		return fail("", "", errors.New("give the time zone as the schedule's zone, not inside the expression"))
	case strings.HasPrefix(expr, "@every"):
		d, err := time.ParseDuration(strings.TrimSpace(strings.TrimPrefix(expr, "@every")))
		switch {
		case err != nil:
			return fail("", "", fmt.Errorf("@every needs a duration such as 90s: %w", err))
		case d < time.Second || d%time.Second != 0:
			return fail("", "", fmt.Errorf("@every %s: the period must be a whole number of seconds, at least 1s", d))
		}
		return &Schedule{expr: expr, loc: loc, every: d}, nil
	case strings.HasPrefix(expr, "@"):
		s, err := parser.Parse(expr)
		if err != nil {
			return fail("", "", err)
		}
		return newSchedule(expr, loc, s.(*robfig.SpecSchedule))
	}
	fields := strings.Fields(expr)
	var names []string
	switch len(fields) {
	case 5:
		names = unixFields
		fields = append([]string{"0"}, fields...) // robfig's order, seconds first
	case 6:
		names = quartzFields
	case 7:
		return fail("year", fields[6], errors.New("the year field of Quartz expressions is not supported: give 5 or 6 fields"))
	default:
		return fail("", "", fmt.Errorf("%d fields: give 5 (minute hour day-of-month month day-of-week) or 6 (with seconds first)", len(fields)))
	}
	field := func(i int) (name, value string) { // i indexes fields, seconds first
		switch {
		case len(names) == 6:
			return names[i], fields[i]
		case i == 0:
			return "second", fields[0]
		}
		return names[i-1], fields[i]
	}
	for i := range fields {
		name, value := field(i)
		up := strings.ToUpper(value)
		switch {
		case (i == 3 && strings.ContainsAny(up, "LW#")) || (i == 5 && strings.ContainsAny(up, "L#")):
			return fail(name, value, errors.New("L (last), W (nearest weekday) and # (nth weekday) are not supported"))
		case strings.Contains(value, "?") && i != 3 && i != 5:
			return fail(name, value, errors.New("? is allowed only in the day-of-month and day-of-week fields"))
		}
	}
	if len(names) == 6 {
		if restricted(fields[3]) && restricted(fields[5]) {
			return fail("day-of-month", fields[3], fmt.Errorf("and day-of-week %q are both restricted; Quartz needs ? in one of them", fields[5]))
		}
		dow, err := quartzDays(fields[5])
		if err != nil {
			return fail("day-of-week", fields[5], err)
		}
		fields[5] = dow
	}
	s, err := parser.Parse(strings.Join(fields, " "))
	if err != nil {
		// Name the field: the first that fails on its own.
		for i := range fields {
			alone := []string{"*", "*", "*", "*", "*", "*"}
			alone[i] = fields[i]
			if _, e := parser.Parse(strings.Join(alone, " ")); e != nil {
				name, value := field(i)
				return fail(name, value, e)
			}
		}
		return fail("", "", err)
	}
	return newSchedule(expr, loc, s.(*robfig.SpecSchedule))
}

func newSchedule(expr string, loc *time.Location, spec *robfig.SpecSchedule) (*Schedule, error) {
	spec.Location = time.UTC // fields match wall time, which Next keeps in UTC
	if spec.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return nil, &Error{Expr: expr, Zone: loc.String(), Err: errors.New("never fires (no such date)")}
	}
	return &Schedule{expr: expr, loc: loc, spec: spec}, nil
}

// restricted reports whether a day field restricts the days.
func restricted(f string) bool { return f != "*" && f != "?" }

// quartzDays rewrites a Quartz day-of-week field (1 = Sunday .. 7 =
// Saturday) to robfig's numbering (0 = Sunday .. 6); names and steps stay.
func quartzDays(f string) (string, error) {
	items := strings.Split(f, ",")
	for i, item := range items {
		base, step, hasStep := strings.Cut(item, "/")
		parts := strings.Split(base, "-")
		for k, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil {
				continue // *, ?, a name: robfig checks it
			}
			if n < 1 || n > 7 {
				return "", fmt.Errorf("day %d: in the 6-field form days are 1 (Sunday) to 7 (Saturday), or SUN-SAT", n)
			}
			parts[k] = strconv.Itoa(n - 1)
		}
		items[i] = strings.Join(parts, "-")
		if hasStep {
			items[i] += "/" + step
		}
	}
	return strings.Join(items, ","), nil
}

// String returns the expression as given.
func (s *Schedule) String() string { return s.expr }

// Period returns the period of an @every schedule, zero for the others.
func (s *Schedule) Period() time.Duration { return s.every }

// Location returns the schedule's time zone.
func (s *Schedule) Location() *time.Location { return s.loc }

// Next returns the first fire time after after (strictly), or the zero
// time when there is none within five years. Fire times are whole seconds.
func (s *Schedule) Next(after time.Time) time.Time {
	if s.every > 0 {
		return after.Truncate(time.Second).Add(s.every)
	}
	w := wall(after.In(s.loc))
	// Walk the matching wall times in wall order; the first whose instant
	// is after `after` is the answer. Only inside a fall-back overlap does
	// a matching wall time map to an instant already past (its first
	// occurrence), so the walk is short.
	for range 7200 {
		w = s.spec.Next(w)
		if w.IsZero() {
			return w
		}
		if at := s.instant(w); at.After(after) {
			return at
		}
	}
	return time.Time{}
}

// wall is t's wall-clock reading as a UTC time, to the second.
func wall(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
}

// instant maps wall time w (a UTC time holding a reading in s.loc) to the
// first instant at which s.loc's clocks show it, or, in a spring-forward
// gap where they never do, the first instant after the gap.
func (s *Schedule) instant(w time.Time) time.Time {
	if s.loc == time.UTC {
		return w
	}
	offset := func(t time.Time) time.Duration {
		_, o := t.In(s.loc).Zone()
		return time.Duration(o) * time.Second
	}
	offs := []time.Duration{offset(w.Add(-26 * time.Hour)), offset(w), offset(w.Add(26 * time.Hour))}
	var first time.Time
	lo, hi := offs[0], offs[0]
	for _, o := range offs {
		lo, hi = min(lo, o), max(hi, o)
		if at := w.Add(-o); wall(at.In(s.loc)).Equal(w) && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	if !first.IsZero() {
		return first.In(s.loc)
	}
	// A gap: the wall clock jumps over w between w-hi and w-lo; find the
	// first second whose reading is past w.
	a, b := w.Add(-hi), w.Add(-lo)
	for b.Sub(a) > time.Second {
		mid := a.Add(b.Sub(a) / 2).Truncate(time.Second)
		if wall(mid.In(s.loc)).Before(w) {
			a = mid
		} else {
			b = mid
		}
	}
	return b.In(s.loc)
}
