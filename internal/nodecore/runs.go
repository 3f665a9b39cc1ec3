package nodecore

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Runs are a node's executions in progress, by claim (a node may hold a
// stale and a new claim of one job): its slots, its per-task slots, and the
// claims a drain released. They are the executor's accounting, which the
// engine's executor keeps around its goroutines and the cluster simulator
// around its simulated bodies. Safe for concurrent use.
type Runs struct {
	slots int
	tasks *TaskSlots // nil: no per-task limit

	mu       sync.Mutex
	inflight map[spi.ClaimRef]*Run
	released map[spi.ClaimRef]bool
}

// NewRuns returns the runs of a node of slots slots, with the per-task
// limits of tasks (nil for none).
func NewRuns(slots int, tasks *TaskSlots) *Runs {
	return &Runs{slots: slots, tasks: tasks, inflight: map[spi.ClaimRef]*Run{}, released: map[spi.ClaimRef]bool{}}
}

func refOf(j *spi.Job) spi.ClaimRef { return spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq} }

// Free returns the number of free slots.
func (r *Runs) Free() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.slots - len(r.inflight)
}

// Running returns the executions in progress, in the order of their
// claims (job id, then claim sequence): the claim check and a drain's
// release act on them in an order that does not depend on a map's, so
// that the cluster simulator's runs of one seed are the same. A run that
// expired is left out: its owner write is made and its body cancelled,
// so a claim check would only report it superseded at every beat.
func (r *Runs) Running() []*Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Run, 0, len(r.inflight))
	for _, x := range r.inflight {
		if !x.expired {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b *Run) int {
		if c := bytes.Compare(a.Job.ID[:], b.Job.ID[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.Job.ClaimSeq, b.Job.ClaimSeq)
	})
	return out
}

// Limited reports whether the node has per-task limits.
func (r *Runs) Limited() bool { return r.tasks != nil }

// Claimable returns the tasks a claim may take now and its limit: all of
// tasks and the free slots when no task has a limit.
func (r *Runs) Claimable(tasks []string) ([]string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	free := r.slots - len(r.inflight)
	if r.tasks == nil {
		return tasks, free
	}
	return r.tasks.Claimable(tasks, free)
}

// Admit splits claimed jobs into those that run (counted against their
// task's limit) and those over it.
func (r *Runs) Admit(jobs []*spi.Job) (run, over []*spi.Job) {
	if r.tasks == nil {
		return jobs, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tasks.AdmitJobs(jobs)
}

// Force counts a job of task past its limit: one that could not be given
// back runs anyway.
func (r *Runs) Force(task string) {
	if r.tasks == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tasks.Force(task)
}

// Start counts j's execution, whose body cancel stops, and returns it.
func (r *Runs) Start(j *spi.Job, cancel context.CancelFunc) *Run {
	x := &Run{Job: j, Cancel: cancel}
	r.mu.Lock()
	r.inflight[refOf(j)] = x
	r.mu.Unlock()
	return x
}

// End ends j's execution: its slot, and its task's, are free. It reports
// whether the owner write of the body's return is owed: not when a drain
// released the claim (the write would only be superseded), nor when the
// run expired (its timeout's write was made then; overran is true).
func (r *Runs) End(j *spi.Job) (owed, overran bool) {
	ref := refOf(j)
	r.mu.Lock()
	defer r.mu.Unlock()
	x := r.inflight[ref]
	delete(r.inflight, ref)
	if r.tasks != nil {
		r.tasks.Done(j.TaskName)
	}
	overran = x != nil && x.expired
	if bug("timeout-late-write") { // planted: a body's late return is written after its timeout's
		return !r.released[ref], overran
	}
	return !r.released[ref] && !overran, overran
}

// Expire ends j's run at its timeout while its body goes on: when the
// body still runs and no drain released the claim, it marks the run
// expired and reports true. The caller then cancels the body and makes
// the timeout's owner write at once; the body's own return writes nothing
// (End), and its slot stays taken until it returns.
func (r *Runs) Expire(j *spi.Job) bool {
	ref := refOf(j)
	r.mu.Lock()
	defer r.mu.Unlock()
	x := r.inflight[ref]
	if x == nil || x.expired || r.released[ref] {
		return false
	}
	x.expired = true
	return true
}

// Expired reports whether j's run expired (Expire): its owner write was
// made at the timeout, and the body's return is not to be finished.
func (r *Runs) Expired(j *spi.Job) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	x := r.inflight[refOf(j)]
	return x != nil && x.expired
}

// Timeout is the run timeout of job j: its own (spi.RunTimeout), else the
// node's, 0 for none; final says a run past it fails for good.
func Timeout(j *spi.Job, node time.Duration) (d time.Duration, final bool) {
	d, final, ok := spi.RunTimeout(j)
	if !ok {
		d = max(node, 0)
	}
	return d, final
}

// WasReleased reports whether a drain released the claim.
func (r *Runs) WasReleased(ref spi.ClaimRef) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.released[ref]
}

// Release gives the jobs whose bodies still run back to PENDING at now,
// then cancels those bodies: the drain that timed out. Releasing first
// matters: a cancelled body's failure must reach the store only after the
// release has fenced it out, or it would charge an attempt (or dead-letter
// the job). It returns the jobs given back, how many ran, and the store's
// error.
func (r *Runs) Release(ctx context.Context, store jobReleaser, now time.Time) (gave []*spi.Job, running int, err error) {
	runs := r.Running()
	if len(runs) == 0 {
		return nil, 0, nil
	}
	refs := make([]spi.ClaimRef, len(runs))
	for i, x := range runs {
		refs[i] = refOf(x.Job)
	}
	ok, err := store.ReleaseJobs(ctx, refs, now.UTC().Truncate(time.Microsecond))
	r.mu.Lock()
	for i, applied := range ok {
		if applied && err == nil {
			r.released[refs[i]] = true
			gave = append(gave, runs[i].Job)
		}
	}
	r.mu.Unlock()
	for _, x := range runs {
		x.Cancel()
	}
	return gave, len(runs), err
}
