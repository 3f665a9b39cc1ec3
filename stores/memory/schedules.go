package memory

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.ScheduleStore = (*Store)(nil)

// CreateSchedule implements spi.ScheduleStore.
func (s *Store) CreateSchedule(_ context.Context, r spi.ScheduleRow) (bool, error) {
	if err := spi.ValidateScheduleRow(r); err != nil {
		return false, fmt.Errorf("memory: create schedule: %w", err)
	}
	if err := s.lock(); err != nil {
		return false, err
	}
	defer s.unlock()
	if _, ok := s.scheds[r.ID]; ok {
		return false, nil
	}
	r.Version = 1
	s.scheds[r.ID] = cloneSchedule(r)
	return true, nil
}

// UpdateSchedule implements spi.ScheduleStore.
func (s *Store) UpdateSchedule(_ context.Context, r spi.ScheduleRow, expected int64) (bool, error) {
	if err := spi.ValidateScheduleRow(r); err != nil {
		return false, fmt.Errorf("memory: update schedule: %w", err)
	}
	if err := s.lock(); err != nil {
		return false, err
	}
	defer s.unlock()
	old, ok := s.scheds[r.ID]
	if !ok || (old.Version != expected && !s.bug("UpdateSchedule ignores the expected version")) {
		return false, nil
	}
	old.TaskName, old.Definition, old.Paused, old.NextFireAt, old.UpdatedAt = r.TaskName, bytes.Clone(r.Definition), r.Paused, r.NextFireAt, r.UpdatedAt
	old.Version++
	s.scheds[r.ID] = old
	return true, nil
}

// GetSchedule implements spi.ScheduleStore.
func (s *Store) GetSchedule(_ context.Context, id string) (spi.ScheduleRow, bool, error) {
	if err := s.lock(); err != nil {
		return spi.ScheduleRow{}, false, err
	}
	defer s.unlock()
	r, ok := s.scheds[id]
	return cloneSchedule(r), ok, nil
}

// ListSchedules implements spi.ScheduleStore.
func (s *Store) ListSchedules(_ context.Context, after string, limit int) ([]spi.ScheduleRow, error) {
	return s.selectSchedules(limit, func(r spi.ScheduleRow) bool { return r.ID > after },
		func(a, b spi.ScheduleRow) int { return cmp.Compare(a.ID, b.ID) })
}

// DueSchedules implements spi.ScheduleStore.
func (s *Store) DueSchedules(_ context.Context, now time.Time, limit int) ([]spi.ScheduleRow, error) {
	return s.selectSchedules(limit, func(r spi.ScheduleRow) bool {
		due := !r.NextFireAt.After(now) && !(s.bug("DueSchedules excludes a schedule due exactly now") && r.NextFireAt.Equal(now))
		return due && (!r.Paused || s.bug("DueSchedules includes paused schedules"))
	},
		func(a, b spi.ScheduleRow) int {
			if c := a.NextFireAt.Compare(b.NextFireAt); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
}

func (s *Store) selectSchedules(limit int, keep func(spi.ScheduleRow) bool, order func(a, b spi.ScheduleRow) int) ([]spi.ScheduleRow, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	var out []spi.ScheduleRow
	for _, r := range s.scheds {
		if keep(r) {
			out = append(out, cloneSchedule(r))
		}
	}
	slices.SortFunc(out, order)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// DeleteSchedule implements spi.ScheduleStore.
func (s *Store) DeleteSchedule(_ context.Context, id string) (bool, error) {
	if err := s.lock(); err != nil {
		return false, err
	}
	defer s.unlock()
	_, ok := s.scheds[id]
	delete(s.scheds, id)
	delete(s.skips, id)
	return ok, nil
}

// ScheduleSkips implements spi.ScheduleStore.
func (s *Store) ScheduleSkips(_ context.Context, id string, limit int) ([]spi.SkipRecord, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	if limit <= 0 {
		limit = 100
	}
	var out []spi.SkipRecord
	for i := len(s.skips[id]) - 1; i >= 0 && len(out) < limit; i-- { // in fire order: the latest last
		out = append(out, s.skips[id][i])
	}
	return out, nil
}

// FireSchedule implements spi.ScheduleStore: the version check, the insert
// and the advance happen under one lock.
func (s *Store) FireSchedule(_ context.Context, f spi.ScheduleFire) (bool, []spi.InsertResult, error) {
	if err := s.lock(); err != nil {
		return false, nil, err
	}
	defer s.unlock()
	r, ok := s.scheds[f.ID]
	if !ok {
		return false, nil, nil
	}
	jobs := f.Jobs
	if s.bug("FireSchedule writes a second job for a slot's key") {
		jobs = make([]*spi.Job, len(f.Jobs))
		for i, j := range f.Jobs {
			jobs[i] = j.Clone()
			jobs[i].IdempotencyKey = ""
		}
	}
	if s.bug("FireSchedule inserts the jobs before it checks the version") {
		s.writeLocked(jobs) // unchecked
	}
	if r.Version != f.Version && !s.bug("FireSchedule ignores the version") {
		return false, nil, nil
	}
	if err := spi.ValidateJobs(jobs); err != nil { // before anything is written
		return false, nil, fmt.Errorf("memory: fire schedule %q: %w", f.ID, err)
	}
	var res []spi.InsertResult
	if !s.bug("FireSchedule inserts the jobs before it checks the version") {
		var err error
		if res, err = s.insertLocked(jobs); err != nil {
			return false, nil, fmt.Errorf("memory: fire schedule %q: %w", f.ID, err)
		}
	}
	r.NextFireAt, r.Skipped, r.UpdatedAt = f.NextFireAt, r.Skipped+f.Skipped, f.Now
	if rec, ok := f.SkipRecord(); ok && !s.bug("FireSchedule counts skipped slots without recording them") {
		recs := append(s.skips[f.ID], rec)
		s.skips[f.ID] = recs[max(0, len(recs)-spi.MaxSkipRecords):]
	}
	if len(f.Jobs) > 0 {
		r.LastFireAt, r.LastJobID = f.LastFireAt, f.LastJobID
	}
	r.Version++
	s.scheds[f.ID] = r
	return true, res, nil
}

func cloneSchedule(r spi.ScheduleRow) spi.ScheduleRow {
	r.Definition = bytes.Clone(r.Definition)
	return r
}
