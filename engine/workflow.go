package engine

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

const (
	// defaultWorkflowRepairInterval is the time between passes of the
	// workflow repair service.
	defaultWorkflowRepairInterval = time.Minute
	// workflowRepairLease is the lease of the repair service; its batch is
	// how many jobs one call releases at most.
	workflowRepairLease = "ratchet-workflow-repair"
	workflowRepairBatch = 1000
)

// dependencyReader is what the dispatch of a workflow job needs of the
// store.
type dependencyReader interface {
	Dependencies(ctx context.Context, id uuid.UUID) ([]spi.Dependency, error)
}

// workflowGate is what deciding a released workflow job needs: its
// dependencies, the conditions this node evaluates, and the pipeline that
// decodes their arguments.
type workflowGate struct {
	deps       dependencyReader
	conditions map[string]ratchet.ConditionDefinition
	pipe       *ratchet.Pipeline
}

// gate decides, before its body, whether a released workflow job runs
// (spi.Decide over the states its parents finished in, then the
// conditions of its dependencies): when it must not, it returns the job's
// owner write (SKIPPED or CANCELLED, the reason as its last error) and
// true. A dependency or a parent that cannot be read, and a condition that
// fails, fail the run through the retry path; a condition that this node
// has not registered fails the job.
func (o outcomes) gate(ctx context.Context, g workflowGate, jc *ratchet.JobContext, j *spi.Job, started time.Time) (nodecore.Pending, bool) {
	if j.DependencyCount == 0 || g.deps == nil {
		return nodecore.Pending{}, false
	}
	ds, err := g.deps.Dependencies(ctx, j.ID)
	if err != nil {
		return o.finish(ctx, jc, j, nil, fmt.Errorf("ratchet: read the dependencies of job %s: %w", j.ID, err), started), true
	}
	decision, reason := nodecore.Decide(ds)
	if decision == spi.DecideRun {
		ok, why, err := g.evaluate(ctx, jc, ds)
		switch {
		case err != nil:
			return o.finish(ctx, jc, j, nil, err, started), true
		case ok:
			return nodecore.Pending{}, false
		}
		decision, reason = spi.DecideSkip, why
	}
	c := nodecore.GateCompletion(j, decision, reason, o.clock.Now().UTC().Truncate(time.Microsecond))
	jc.Logger.Info("job not run: "+reason, "status", string(c.Outcome.Status()))
	return nodecore.Pending{C: c, Job: j}, true
}

// evaluate runs the conditions of ds, in order: ok when every one holds,
// else why names the first that did not. The parents are read only when
// there is a condition.
func (g workflowGate) evaluate(ctx context.Context, jc *ratchet.JobContext, ds []spi.Dependency) (ok bool, why string, err error) {
	var parents map[uuid.UUID]ratchet.Parent
	for _, d := range ds {
		if d.Condition == "" {
			continue
		}
		cond := g.conditions[d.Condition]
		if cond == nil {
			return false, "", ratchet.DoNotRetry(fmt.Errorf("ratchet: workflow condition %q is not registered on this node", d.Condition))
		}
		if parents == nil {
			ps, err := jc.Parents(ctx)
			if err != nil {
				return false, "", err
			}
			parents = make(map[uuid.UUID]ratchet.Parent, len(ps))
			for _, p := range ps {
				parents[p.ID] = p
			}
		}
		var args []byte
		if d.ConditionArgs != nil {
			if args, err = g.pipe.DecodeBytes(ctx, ratchet.JobRef(ratchet.SurfaceBranch, jc.ID), d.ConditionArgs); err != nil {
				return false, "", ratchet.DoNotRetry(fmt.Errorf("ratchet: workflow condition %q: %w", d.Condition, err))
			}
		}
		holds, err := evaluateSafely(ctx, cond, parents[d.ParentID], args, g.pipe.Serializer())
		if err != nil {
			return false, "", fmt.Errorf("ratchet: workflow condition %q over job %s: %w", d.Condition, d.ParentID, err)
		}
		if !holds {
			return false, fmt.Sprintf("ratchet: workflow condition %q over job %s is false", d.Condition, d.ParentID), nil
		}
	}
	return true, "", nil
}

// evaluateSafely evaluates a condition, turning a panic into a
// *ratchet.PanicError.
func evaluateSafely(ctx context.Context, c ratchet.ConditionDefinition, p ratchet.Parent, args []byte, ser spi.PayloadSerializer) (ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			ok, err = false, &ratchet.PanicError{Value: r, Stack: string(debug.Stack())}
		}
	}()
	return c.Evaluate(ctx, p, args, ser)
}

// conditionsByName checks the engine's conditions and maps them by name.
func conditionsByName(cs []ratchet.ConditionDefinition) (map[string]ratchet.ConditionDefinition, error) {
	out := make(map[string]ratchet.ConditionDefinition, len(cs))
	for i, c := range cs {
		if c == nil {
			return nil, fmt.Errorf("%w: workflow condition %d is nil", ratchet.ErrInvalidArgument, i)
		}
		if v, ok := c.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				return nil, fmt.Errorf("workflow condition %d: %w", i, err)
			}
		}
		if c.Name() == "" {
			return nil, fmt.Errorf("%w: workflow condition %d has an empty name", ratchet.ErrInvalidArgument, i)
		}
		if _, dup := out[c.Name()]; dup {
			return nil, fmt.Errorf("%w: workflow condition %q registered twice", ratchet.ErrInvalidArgument, c.Name())
		}
		out[c.Name()] = c
	}
	return out, nil
}

// workflowRepairer is the workflow repair service: nodecore.WorkflowRepair
// every interval, warning of each release it made.
func workflowRepairer(store spi.WorkflowStore, interval time.Duration) Service {
	return &passService{name: "workflow-repair", interval: interval, pass: func(ctx context.Context, log *slog.Logger) func(time.Time) (bool, error) {
		p := nodecore.WorkflowRepair{Store: store, Limit: workflowRepairBatch, Repaired: func(n int) {
			log.Warn("released workflow jobs whose parents had all finished (a release cut short)", "jobs", n)
		}}
		return func(now time.Time) (bool, error) { return p.Pass(ctx, now) }
	}}
}
