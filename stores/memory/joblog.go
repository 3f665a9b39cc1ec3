package memory

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.JobLogStore = (*Store)(nil)

// AppendJobLogs implements spi.JobLogStore.
func (s *Store) AppendJobLogs(_ context.Context, appends []spi.LogAppend) ([]bool, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	out := make([]bool, len(appends))
	for i, a := range appends {
		j, ok := s.jobs[a.JobID]
		if !ok || (j.ClaimSeq != a.ClaimSeq && !s.bug("AppendJobLogs ignores the claim sequence")) {
			continue
		}
		out[i] = true
		log := s.logs[a.JobID]
		last := -1
		for _, l := range log {
			if l.ClaimSeq == a.ClaimSeq {
				last = max(last, l.Line)
			}
		}
		if s.logBugs() {
			s.logs[a.JobID] = appendLogBugs(s, log, a)
			continue
		}
		if lines := spi.LinesToWrite(a, len(log), last); len(lines) > 0 {
			s.logs[a.JobID] = append(log, lines...)
		}
	}
	return out, nil
}

// JobLogs implements spi.JobLogStore.
func (s *Store) JobLogs(_ context.Context, jobID uuid.UUID, after spi.LogCursor, limit int) ([]spi.LogLine, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	if limit <= 0 {
		limit = 100
	}
	var out []spi.LogLine
	for _, l := range s.logs[jobID] { // in (claim, line) order: appends come in that order
		if after.Precedes(l) && len(out) < limit {
			out = append(out, l)
		}
	}
	return out, nil
}

// DeleteJobLogs implements spi.JobLogStore.
func (s *Store) DeleteJobLogs(_ context.Context, before time.Time, limit int) (int, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.unlock()
	deleted, jobs := 0, 0
	for id, log := range s.logs {
		if jobs >= max(limit, 1) {
			break
		}
		kept := log[:0:0]
		for _, l := range log {
			if l.Time.Before(before) || s.bug("DeleteJobLogs ignores the cutoff") {
				deleted++
			} else {
				kept = append(kept, l)
			}
		}
		if len(kept) == len(log) {
			continue
		}
		jobs++
		if len(kept) == 0 {
			delete(s.logs, id)
		} else {
			s.logs[id] = kept
		}
	}
	return deleted, nil
}
