package engine

import (
	"context"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// ExecutionTuning bounds the jobs of each task that run at once on a node,
// beside the node's Concurrency: the spec's ExecutionTuningProvider.
type ExecutionTuning interface {
	// MaxConcurrency returns the most jobs of task that run at once on
	// this node; def is the node's Concurrency (no limit of its own).
	MaxConcurrency(task string, def int) int
}

// TaskLimits is an ExecutionTuning of a map: the limit of each task
// named, Concurrency for the others.
type TaskLimits map[string]int

// MaxConcurrency returns the task's limit, or def.
func (l TaskLimits) MaxConcurrency(task string, def int) int {
	if n, ok := l[task]; ok && n > 0 {
		return min(n, def)
	}
	return def
}

// taskSlots keeps the per-task limits of a node: the tasks a claim may
// take now, and the admission of each claimed job. Its methods run under
// the executor's lock.
type taskSlots struct {
	limit   map[string]int // the tasks with a limit below Concurrency
	running map[string]int // their jobs running now
}

// newTaskSlots returns the limits of tasks, nil when none is below the
// node's concurrency (then nothing is counted).
func newTaskSlots(t ExecutionTuning, tasks []string, concurrency int) *taskSlots {
	if t == nil {
		return nil
	}
	s := &taskSlots{limit: map[string]int{}, running: map[string]int{}}
	for _, name := range tasks {
		if n := t.MaxConcurrency(name, concurrency); n < concurrency {
			s.limit[name] = max(n, 1)
		}
	}
	if len(s.limit) == 0 {
		return nil
	}
	return s
}

// claimable returns the tasks a claim may take (those below their limit)
// and how many jobs it may take of them at most.
func (s *taskSlots) claimable(tasks []string, free int) ([]string, int) {
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

// admit counts a claimed job of task, or refuses it (false) when the
// task is at its limit.
func (s *taskSlots) admit(task string) bool {
	n, limited := s.limit[task]
	if !limited {
		return true
	}
	if s.running[task] >= n {
		return false
	}
	s.running[task]++
	return true
}

// done uncounts an admitted job of task.
func (s *taskSlots) done(task string) {
	if _, limited := s.limit[task]; limited {
		s.running[task]--
	}
}

// giveBack releases claimed jobs that a task's limit refused, back to
// PENDING due now, without charging them: a claim may take more jobs of a
// task than it has room for, when they rank first.
func (x *executor) giveBack(ctx context.Context, jobs []*spi.Job) {
	if len(jobs) == 0 {
		return
	}
	refs := make([]spi.ClaimRef, len(jobs))
	for i, j := range jobs {
		refs[i] = spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}
	}
	ok, err := x.store.ReleaseJobs(ctx, refs, x.clock.Now().UTC().Truncate(time.Microsecond))
	for i, j := range jobs {
		if err != nil || !ok[i] {
			// Not given back: run it past the limit rather than leave a
			// claimed job without a body.
			x.log.Warn("a job over its task's limit was not given back; running it", "job_id", j.ID, "task", j.TaskName, "err", err)
			x.mu.Lock()
			x.tasks.running[j.TaskName]++
			x.mu.Unlock()
			x.dispatch(j)
		}
	}
}

// admit splits claimed jobs into those that run (counted against their
// task's limit) and those over it.
func (x *executor) admit(jobs []*spi.Job) (run, over []*spi.Job) {
	if x.tasks == nil {
		return jobs, nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	run = jobs[:0:0]
	for _, j := range jobs {
		if x.tasks.admit(j.TaskName) {
			run = append(run, j)
		} else {
			over = append(over, j)
		}
	}
	return run, over
}

// claimable returns the tasks a claim may take now and its limit: all of
// tasks and the free slots when no task has a limit.
func (x *executor) claimable(tasks []string) ([]string, int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	free := x.slots - len(x.inflight)
	if x.tasks == nil {
		return tasks, free
	}
	return x.tasks.claimable(tasks, free)
}
