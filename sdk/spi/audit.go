package spi

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"
)

// AuditLog is implemented by stores that keep an audit log: the record of
// what operators did to the jobs and schedules (the dashboard's actions,
// for one), kept in the store so that every dashboard and CLI of a cluster
// sees the same history and it survives their restarts.
type AuditLog interface {
	// AppendAudit checks e with Validate (a refused entry gives Validate's
	// error, wrapped, and writes nothing), writes it and returns it as
	// stored: its Seq set, its Time in UTC to the microsecond (the store's
	// now when e's was zero). Seq is assigned by the store, unique, and
	// greater than that of every entry whose append returned before this
	// one was called; appends that run at the same time may commit out of
	// Seq order (a listing taken meanwhile can show a Seq before a lower
	// one appears).
	AppendAudit(ctx context.Context, e AuditEntry) (AuditEntry, error)
	// ListAudit returns up to limit (zero or less: 100) entries, newest
	// (highest Seq) first, whose Seq is below before (zero or less: from
	// the newest); the last entry's Seq continues the listing, and an
	// empty page ends it.
	ListAudit(ctx context.Context, before int64, limit int) ([]AuditEntry, error)
	// DeleteAudit deletes up to limit (zero or less: 100) entries whose
	// Time is before before, oldest first (by Time, then Seq), and returns
	// how many it deleted; called until it returns 0 it clears every entry
	// older than before.
	DeleteAudit(ctx context.Context, before time.Time, limit int) (int, error)
}

// DefaultAuditPage is the limit of ListAudit and DeleteAudit when theirs is
// zero or less.
const DefaultAuditPage = 100

// AuditEntry is one action of an operator. Its zero value is not a valid
// entry: Actor and Action are required.
type AuditEntry struct {
	// Seq orders the entries; the store assigns it (0 before appending).
	Seq int64
	// Time is when the action was taken (UTC, to the microsecond).
	Time time.Time
	// Actor names who acted: a dashboard user, "cli", a token's name.
	Actor string
	// Action names what was done: "jobs.retry", "schedule.pause", ...
	Action string
	// Target is what it was done to: a job id, a schedule id, or the
	// filter of a bulk action, as text.
	Target string
	// Count is how many jobs it changed (0 when it does not apply).
	Count int64
	// Detail is free text: the outcome, what was skipped, the error.
	Detail string
}

// Bounds of an audit entry's text fields, in bytes: a store refuses a
// longer field (Validate) rather than cutting it.
const (
	MaxAuditActor  = 200
	MaxAuditAction = 100
	MaxAuditTarget = 2000
	MaxAuditDetail = 2000
)

// Validate reports what makes e unfit to append, naming the field: a
// missing Actor or Action, a field past its bound, a negative Count. Every
// store calls it before writing.
func (e AuditEntry) Validate() error {
	switch {
	case e.Actor == "":
		return fmt.Errorf("audit entry: Actor is empty")
	case e.Action == "":
		return fmt.Errorf("audit entry: Action is empty")
	case e.Count < 0:
		return fmt.Errorf("audit entry: Count %d is negative", e.Count)
	}
	for _, f := range []struct {
		name string
		v    string
		max  int
	}{{"Actor", e.Actor, MaxAuditActor}, {"Action", e.Action, MaxAuditAction}, {"Target", e.Target, MaxAuditTarget}, {"Detail", e.Detail, MaxAuditDetail}} {
		if len(f.v) > f.max {
			return fmt.Errorf("audit entry: %s is %d bytes, more than its bound of %d", f.name, len(f.v), f.max)
		}
	}
	return nil
}

// Clipped returns e with each text field cut to its bound (MaxAuditActor,
// ...), on a UTF-8 boundary: what a caller appends that would rather keep
// the start of a long filter or error than lose the entry.
func (e AuditEntry) Clipped() AuditEntry {
	e.Actor, e.Action = clipText(e.Actor, MaxAuditActor), clipText(e.Action, MaxAuditAction)
	e.Target, e.Detail = clipText(e.Target, MaxAuditTarget), clipText(e.Detail, MaxAuditDetail)
	return e
}

// clipText cuts s to at most n bytes, without splitting a UTF-8 sequence.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for range utf8.UTFMax - 1 { // a sequence cut short: drop its bytes
		if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size > 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}
