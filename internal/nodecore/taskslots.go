package nodecore

import (
	"context"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TaskSlots keeps the per-task limits of a node: the tasks a claim may take
// now (Claimable), and the admission of each claimed job (Admit, Done). It
// is not safe for concurrent use: the engine's executor calls it under its
// lock, the cluster simulator from its event loop.
type TaskSlots struct {
	limit   map[string]int // the tasks with a limit below the node's concurrency
	running map[string]int // their jobs running now
}

// NewTaskSlots returns the slots of tasks under limit (the most jobs of a
// task that run at once on the node, given the node's concurrency), nil
// when no task is below concurrency (then nothing is counted).
func NewTaskSlots(tasks []string, concurrency int, limit func(task string, concurrency int) int) *TaskSlots {
	s := &TaskSlots{limit: map[string]int{}, running: map[string]int{}}
	for _, name := range tasks {
		if n := limit(name, concurrency); n < concurrency {
			s.limit[name] = max(n, 1)
		}
	}
	if len(s.limit) == 0 {
		return nil
	}
	return s
}

// Claimable returns the tasks a claim may take (those below their limit)
// and how many jobs it may take of them at most, with free slots.
func (s *TaskSlots) Claimable(tasks []string, free int) ([]string, int) {
	out := make([]string, 0, len(tasks))
	room := 0
	for _, name := range tasks {
		n, limited := s.limit[name]
		switch {
		case !limited:
			out, room = append(out, name), free
		case s.running[name] < n:
			out, room = append(out, name), room+n-s.running[name]
		}
	}
	return out, min(room, free)
}

// Admit counts a claimed job of task, or refuses it (false) when the task
// is at its limit.
func (s *TaskSlots) Admit(task string) bool {
	n, limited := s.limit[task]
	if !limited {
		return true
	}
	if bug("task-limit-off-by-one") { // planted: one job of the task past its limit
		n++
	}
	if s.running[task] >= n {
		return false
	}
	s.running[task]++
	return true
}

// AdmitJobs splits claimed jobs into those that run (each admitted,
// counted against its task's limit) and those over it.
func (s *TaskSlots) AdmitJobs(jobs []*spi.Job) (run, over []*spi.Job) {
	run = jobs[:0:0]
	for _, j := range jobs {
		if s.Admit(j.TaskName) {
			run = append(run, j)
		} else {
			over = append(over, j)
		}
	}
	return run, over
}

// Force counts a job of task past its limit: one that could not be given
// back runs anyway.
func (s *TaskSlots) Force(task string) {
	if _, limited := s.limit[task]; limited {
		s.running[task]++
	}
}

// Done uncounts an admitted (or forced) job of task.
func (s *TaskSlots) Done(task string) {
	if _, limited := s.limit[task]; limited {
		s.running[task]--
	}
}

// jobReleaser is what a give-back needs of the store.
type jobReleaser interface {
	ReleaseJobs(ctx context.Context, refs []spi.ClaimRef, now time.Time) ([]bool, error)
}

// GiveBack releases claimed jobs that a task's limit refused, back to
// PENDING due at now, without charging them (a claim may take more jobs
// of a task than it has room for, when they rank first). It returns those
// it could not give back, for the caller to run past the limit rather than
// leave a claimed job without a body, and the store's error.
func GiveBack(ctx context.Context, store jobReleaser, now time.Time, jobs []*spi.Job) (kept []*spi.Job, err error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	refs := make([]spi.ClaimRef, len(jobs))
	for i, j := range jobs {
		refs[i] = spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}
	}
	ok, err := store.ReleaseJobs(ctx, refs, now.UTC().Truncate(time.Microsecond))
	for i, j := range jobs {
		if err != nil || !ok[i] {
			kept = append(kept, j)
		}
	}
	return kept, err
}
