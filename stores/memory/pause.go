package memory

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// PauseTask implements spi.TaskPauser. A claim holds the store's lock, so
// every claim that begins after PauseTask returns sees the pause.
func (s *Store) PauseTask(_ context.Context, task string, now time.Time) (bool, error) {
	if err := s.lock(); err != nil {
		return false, err
	}
	defer s.unlock()
	if _, ok := s.paused[task]; ok {
		return false, nil
	}
	s.paused[task] = now.UTC().Truncate(time.Microsecond)
	return true, nil
}

// ResumeTask implements spi.TaskPauser. The task's due jobs are claimable
// again; the nodes that run it are told (a wakeup).
func (s *Store) ResumeTask(_ context.Context, task string) (bool, error) {
	if err := s.lock(); err != nil {
		return false, err
	}
	defer s.unlock()
	if _, ok := s.paused[task]; !ok {
		return false, nil
	}
	delete(s.paused, task)
	s.oweAt(spi.PriorityCritical)
	return true, nil
}

// PausedTasks implements spi.TaskPauser.
func (s *Store) PausedTasks(context.Context) ([]spi.PausedTask, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	out := make([]spi.PausedTask, 0, len(s.paused))
	for t, since := range s.paused {
		out = append(out, spi.PausedTask{Task: t, Since: since})
	}
	slices.SortFunc(out, func(a, b spi.PausedTask) int { return strings.Compare(a.Task, b.Task) })
	return out, nil
}

// isPaused reports whether a claim passes over the jobs of task. s.mu is
// held.
func (s *Store) isPaused(task string) bool {
	_, ok := s.paused[task]
	return ok && !s.bug("claim takes the jobs of paused tasks")
}
