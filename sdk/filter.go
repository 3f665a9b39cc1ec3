package ratchet

import (
	"fmt"
	"strings"
	"time"
)

// JobFilter is a job listing's filters as an operator types them: the
// text of the ratchet command's flags and of the dashboard's form. Its
// zero value matches every live job. ListOptions parses it.
type JobFilter struct {
	// Status names a job state, in any case ("failed").
	Status string
	// Task and Tag are taken as they are.
	Task, Tag string
	// Priorities name priorities (or give their numbers); an entry may
	// list several, comma-separated ("normal,HIGH").
	Priorities []string
	// ErrorContains matches the last error, ignoring case.
	ErrorContains string
	// CreatedFrom (inclusive) and CreatedBefore (exclusive) are times in
	// RFC 3339, or 2006-01-02T15:04[:05] or 2006-01-02 read in UTC (what
	// a browser's date and time inputs send).
	CreatedFrom, CreatedBefore string
	// Property is KEY=VALUE.
	Property string
	// Due is "now" (due now) or "later" (scheduled later), in any case;
	// empty for either (ListOptions.Due).
	Due string
	// Archived lists the archived jobs too.
	Archived bool
}

// FilterError is a JobFilter field that does not parse. It wraps
// ErrInvalidArgument.
type FilterError struct {
	// Field names the filter: status, priority, created_from,
	// created_before, property or due.
	Field string
	// Value is the text given.
	Value string
	// Reason says what is wrong with it.
	Reason string
}

// Error reads like `status "LOST": not a job state (PENDING, ...)`.
func (e *FilterError) Error() string { return fmt.Sprintf("%s %q: %s", e.Field, e.Value, e.Reason) }

// Unwrap returns ErrInvalidArgument.
func (e *FilterError) Unwrap() error { return ErrInvalidArgument }

// ListOptions parses the filter: the first field that does not parse
// gives a *FilterError naming it.
func (f JobFilter) ListOptions() (ListOptions, error) {
	o := ListOptions{Task: strings.TrimSpace(f.Task), Tag: strings.TrimSpace(f.Tag), ErrorContains: f.ErrorContains, IncludeArchived: f.Archived}
	if strings.TrimSpace(f.Status) != "" {
		st, err := ParseStatus(f.Status)
		if err != nil {
			return o, &FilterError{"status", f.Status, "not a job state (PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED, BLOCKED, SKIPPED, WAITING)"}
		}
		o.Status = st
	}
	for _, entry := range f.Priorities {
		for _, name := range strings.Split(entry, ",") {
			if name = strings.TrimSpace(name); name == "" {
				continue
			}
			p, err := ParsePriority(name)
			if err != nil {
				return o, &FilterError{"priority", name, "not a priority (" + priorityNames() + ")"}
			}
			o.Priorities = append(o.Priorities, p)
		}
	}
	var err error
	if o.CreatedFrom, err = filterTime(f.CreatedFrom); err != nil {
		return o, &FilterError{"created_from", f.CreatedFrom, err.Error()}
	}
	if o.CreatedBefore, err = filterTime(f.CreatedBefore); err != nil {
		return o, &FilterError{"created_before", f.CreatedBefore, err.Error()}
	}
	switch d := DueFilter(strings.ToLower(strings.TrimSpace(f.Due))); d {
	case "", DueNow, DueLater:
		o.Due = d
	default:
		return o, &FilterError{"due", f.Due, `want "now" (due now) or "later" (scheduled later)`}
	}
	if p := strings.TrimSpace(f.Property); p != "" {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return o, &FilterError{"property", f.Property, "want KEY=VALUE"}
		}
		o.PropertyKey, o.PropertyValue = k, v
	}
	return o, nil
}

// filterTime reads RFC 3339, or a date and time without a zone taken as
// UTC; empty is the zero time.
func filterTime(s string) (time.Time, error) {
	if s = strings.TrimSpace(s); s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("not a time (RFC 3339, or 2006-01-02T15:04 in UTC)")
}
