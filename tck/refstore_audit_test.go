package tck

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The reference store's audit log.

// The defects of the audit log the self-test plants.
const (
	bugAuditOldestFirst       bug = "ListAudit lists oldest first"
	bugAuditIgnoresBefore     bug = "ListAudit ignores the before cursor"
	bugAuditDeleteIgnoreLimit bug = "DeleteAudit ignores the limit"
	bugAuditSkipsValidate     bug = "AppendAudit writes an entry that Validate refuses"
)

var _ spi.AuditLog = (*refStore)(nil)

// refAudit is the reference store's audit log: the entries in Seq order
// and the last Seq given.
type refAudit struct {
	entries []spi.AuditEntry
	seq     int64
}

// AppendAudit implements spi.AuditLog.
func (s *refStore) AppendAudit(_ context.Context, e spi.AuditEntry) (spi.AuditEntry, error) {
	if err := e.Validate(); err != nil {
		return spi.AuditEntry{}, fmt.Errorf("ref: append audit entry: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return spi.AuditEntry{}, err
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC().Truncate(time.Microsecond)
	s.audit.seq++
	e.Seq = s.audit.seq
	s.audit.entries = append(s.audit.entries, e)
	return e, nil
}

// ListAudit implements spi.AuditLog.
func (s *refStore) ListAudit(_ context.Context, before int64, limit int) ([]spi.AuditEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = spi.DefaultAuditPage
	}
	es := slices.Clone(s.audit.entries)
	slices.Reverse(es)
	out := []spi.AuditEntry{}
	for _, e := range es {
		if (before <= 0 || e.Seq < before) && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

// DeleteAudit implements spi.AuditLog.
func (s *refStore) DeleteAudit(_ context.Context, before time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	if limit <= 0 {
		limit = spi.DefaultAuditPage
	}
	var old []spi.AuditEntry
	for _, e := range s.audit.entries {
		if e.Time.Before(before) {
			old = append(old, e)
		}
	}
	slices.SortFunc(old, func(a, b spi.AuditEntry) int { return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Seq, b.Seq)) })
	old = old[:min(limit, len(old))]
	gone := map[int64]bool{}
	for _, e := range old {
		gone[e.Seq] = true
	}
	s.audit.entries = slices.DeleteFunc(s.audit.entries, func(e spi.AuditEntry) bool { return gone[e.Seq] })
	return len(gone), nil
}
