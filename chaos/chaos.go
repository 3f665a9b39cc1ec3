package chaos

import (
	"context"
	"errors"
	"os"
	"slices"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// Names of the chaos tasks.
const (
	// SleepTask sleeps SleepArgs.Millis, honouring cancellation, and records
	// the execution in chaos_run.
	SleepTask = "chaos.sleep"
	// PoisonTask records its start in chaos_run, then kills its own process
	// with SIGKILL: a job that takes its node down every time it runs.
	PoisonTask = "chaos.poison"
	// PermitTask is SleepTask under another name, for jobs submitted with a
	// resource permit (ratchet.WithResource).
	PermitTask = "chaos.permit"
	// StepTask is a workflow step: SleepTask that then fails for good
	// (DoNotRetry) when StepArgs.Fail is set.
	StepTask = "chaos.step"
)

// RunTable is the table, in the Ratchet schema, where task bodies record
// their executions.
const RunTable = "chaos_run"

// FinalTable is the table, in the Ratchet schema, where workers record each
// finalization their engine reports (a succeeded, failed, skipped or
// cancelled event: a completion the store said it applied).
const FinalTable = "chaos_final"

// Outcomes of an execution recorded in chaos_run.
const (
	OutcomeOK        = "ok"        // the body ran to its end
	OutcomeCancelled = "cancelled" // the body's context ended first
	OutcomeError     = "error"     // the body returned an error (Recorder.Middleware)
	OutcomePanic     = "panic"     // the body panicked (Recorder.Middleware)
)

// SleepArgs are the arguments of chaos.sleep and chaos.permit.
type SleepArgs struct {
	// Millis is how long the body sleeps.
	Millis int `json:"millis"`
}

// StepArgs are the arguments of chaos.step.
type StepArgs struct {
	Millis int  `json:"millis"`
	Fail   bool `json:"fail,omitempty"`
}

// ErrStepFailed is the failure of a chaos.step told to fail.
var ErrStepFailed = errors.New("chaos: step told to fail")

// PoisonArgs are the arguments of chaos.poison (none).
type PoisonArgs struct{}

// Tasks are the chaos tasks. Register Definitions with an engine; submit
// with the fields.
type Tasks struct {
	// Sleep is chaos.sleep.
	Sleep *ratchet.Task[SleepArgs, ratchet.Void]
	// Poison is chaos.poison.
	Poison *ratchet.Task[PoisonArgs, ratchet.Void]
	// Permit is chaos.permit; submit it with ratchet.WithResource.
	Permit *ratchet.Task[SleepArgs, ratchet.Void]
	// Step is chaos.step, for workflows.
	Step *ratchet.Task[StepArgs, ratchet.Void]
}

// Definitions returns the tasks for engine.New.
func (t Tasks) Definitions() []ratchet.Definition {
	return []ratchet.Definition{t.Sleep, t.Poison, t.Permit, t.Step}
}

// ErrNoRecorder is the error of a body run by tasks made without a
// Recorder (tasks meant for submitting only).
var ErrNoRecorder = errors.New("chaos: task built without a recorder cannot run")

// NewTasks returns the chaos tasks, whose bodies record their executions
// with rec. A nil rec gives tasks that can be submitted but not run (their
// bodies fail with ErrNoRecorder, wrapped in DoNotRetry).
func NewTasks(rec *Recorder) Tasks { return newTasks(rec, false) }

// newTasks returns the chaos tasks; with outside, their bodies record
// nothing themselves (a Recorder.Middleware of the engine records every
// execution).
func newTasks(rec *Recorder, outside bool) Tasks {
	begin := func(ctx context.Context) (int64, error) {
		switch {
		case outside:
			return 0, nil
		case rec == nil:
			return 0, ratchet.DoNotRetry(ErrNoRecorder)
		}
		return rec.Start(ctx)
	}
	end := func(ctx context.Context, run int64, outcome string) error {
		if outside {
			return nil
		}
		return rec.End(ctx, run, outcome)
	}
	sleep := func(ctx context.Context, a SleepArgs) error {
		run, err := begin(ctx)
		if err != nil {
			return err
		}
		t := time.NewTimer(time.Duration(a.Millis) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return end(ctx, run, OutcomeOK)
		case <-ctx.Done():
			return errors.Join(ctx.Err(), end(ctx, run, OutcomeCancelled))
		}
	}
	poison := func(ctx context.Context, _ PoisonArgs) error {
		if _, err := begin(ctx); err != nil {
			return err
		}
		killSelf()
		<-ctx.Done() // not reached: the process is gone
		return ctx.Err()
	}
	step := func(ctx context.Context, a StepArgs) error {
		if err := sleep(ctx, SleepArgs{Millis: a.Millis}); err != nil || !a.Fail {
			return err
		}
		return ratchet.DoNotRetry(ErrStepFailed)
	}
	return Tasks{
		Sleep:  ratchet.NewVoidTask(SleepTask, sleep),
		Poison: ratchet.NewVoidTask(PoisonTask, poison),
		Permit: ratchet.NewVoidTask(PermitTask, sleep),
		Step:   ratchet.NewVoidTask(StepTask, step),
	}
}

// killSelf kills the current process at once, as the OOM killer or a
// segfault in cgo would: no deferred functions, no graceful stop. On Unix
// this is SIGKILL (exit status 137 in a shell).
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill()
	}
	os.Exit(137) // only if the kill could not be sent
}

// MaxOverlap returns the largest number of runs that were executing at one
// instant, from their start and end records. A run that never ended counts
// as running until the end of time; a run that ends when another starts
// does not overlap it.
func MaxOverlap(runs []Execution) int {
	type edge struct {
		at    time.Time
		delta int
	}
	edges := make([]edge, 0, 2*len(runs))
	for _, r := range runs {
		edges = append(edges, edge{r.StartedAt, +1})
		if !r.EndedAt.IsZero() {
			edges = append(edges, edge{r.EndedAt, -1})
		}
	}
	sortEdges := func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta // ends before starts at the same instant
	}
	slices.SortFunc(edges, sortEdges)
	cur, peak := 0, 0
	for _, e := range edges {
		cur += e.delta
		peak = max(peak, cur)
	}
	return peak
}
