package engine

import (
	"context"

	"github.com/ratchet-go/ratchet/internal/nodecore"
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

// newTaskSlots returns the per-task limits of tasks under t, nil when
// none is below the node's concurrency.
func newTaskSlots(t ExecutionTuning, tasks []string, concurrency int) *nodecore.TaskSlots {
	if t == nil {
		return nil
	}
	return nodecore.NewTaskSlots(tasks, concurrency, t.MaxConcurrency)
}

// giveBack releases claimed jobs that a task's limit refused
// (nodecore.GiveBack), and runs those it could not give back past the
// limit.
func (x *executor) giveBack(ctx context.Context, jobs []*spi.Job) {
	kept, err := nodecore.GiveBack(ctx, x.store, x.clock.Now(), jobs)
	for _, j := range kept {
		x.log.Warn("a job over its task's limit was not given back; running it", "job_id", j.ID, "task", j.TaskName, "err", err)
		x.runs.Force(j.TaskName)
		x.dispatch(j)
	}
}
