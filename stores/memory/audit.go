package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.AuditLog = (*Store)(nil)

// AppendAudit implements spi.AuditLog: the entries are kept in Seq order,
// Seq counting from 1 and never reused.
func (s *Store) AppendAudit(_ context.Context, e spi.AuditEntry) (spi.AuditEntry, error) {
	if err := e.Validate(); err != nil && !s.bug("AppendAudit writes an entry that Validate refuses") {
		return spi.AuditEntry{}, fmt.Errorf("memory: append audit entry: %w", err)
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC().Truncate(time.Microsecond)
	if err := s.lock(); err != nil {
		return spi.AuditEntry{}, err
	}
	defer s.unlock()
	s.auditSeq++
	e.Seq = s.auditSeq
	s.audit = append(s.audit, e)
	return e, nil
}

// ListAudit implements spi.AuditLog.
func (s *Store) ListAudit(_ context.Context, before int64, limit int) ([]spi.AuditEntry, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	if limit <= 0 {
		limit = spi.DefaultAuditPage
	}
	end := len(s.audit)
	if before > 0 && !s.bug("ListAudit ignores the before cursor") {
		end = sort.Search(len(s.audit), func(i int) bool { return s.audit[i].Seq >= before })
	}
	out := []spi.AuditEntry{}
	for i := end - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, s.audit[i])
	}
	if s.bug("ListAudit lists oldest first") {
		out = append(out[:0], s.audit[:min(limit, end)]...)
	}
	return out, nil
}

// DeleteAudit implements spi.AuditLog.
func (s *Store) DeleteAudit(_ context.Context, before time.Time, limit int) (int, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.unlock()
	if limit <= 0 {
		limit = spi.DefaultAuditPage
	}
	var old []spi.AuditEntry
	for _, e := range s.audit {
		if e.Time.Before(before) {
			old = append(old, e)
		}
	}
	slices.SortFunc(old, func(a, b spi.AuditEntry) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Seq, b.Seq))
	})
	gone := map[int64]bool{}
	if !s.bug("DeleteAudit ignores the limit") {
		old = old[:min(limit, len(old))]
	}
	for _, e := range old {
		gone[e.Seq] = true
	}
	s.audit = slices.DeleteFunc(s.audit, func(e spi.AuditEntry) bool { return gone[e.Seq] })
	return len(gone), nil
}
