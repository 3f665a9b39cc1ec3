package ratchet

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/internal/stored"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// JobContext describes the running job to its task body. The engine puts it
// in the body's context; read it with JobFromContext.
type JobContext struct {
	ID       uuid.UUID
	TaskName string
	// Run is which execution of the job this is, from 1: Job.Attempts + 1,
	// where Job.Attempts counts the failed executions so far. The first
	// execution is run 1, the first retry run 2. A crash redelivery repeats
	// the run number (crashes are counted in CrashCount, not as attempts).
	Run        int
	CrashCount int
	// Snoozes is how many earlier runs of the job snoozed (Snooze): they
	// count in neither Run nor CrashCount.
	Snoozes     int
	Priority    Priority
	ScheduledAt time.Time
	// WorkflowID is the workflow or batch the job belongs to (a batch's
	// children carry the batch's id); zero for none.
	WorkflowID uuid.UUID
	// Logger is the run's logger: by default the engine's, tagged with the
	// job id, task and run (see JobLoggerFactory). Under an engine whose
	// store keeps job logs, what the body logs through it is also kept
	// with the job (Client.JobLogs).
	Logger *slog.Logger
	params map[string]string

	// The run's fence and where its state lives: hidden from the body,
	// which reads and writes state through the methods below.
	claimSeq int64
	state    spi.JobStateStore
	props    PropertyReader
	pipe     *Pipeline
	// The job's workflow dependencies: how many, how to read them, and
	// what was read (once per run).
	deps     int
	loadDeps func(ctx context.Context, id uuid.UUID) ([]Parent, error)
	parents  []Parent
	loaded   bool
	// How to read the job's signal wait; nil where the store keeps none.
	loadSignal func(ctx context.Context, id uuid.UUID) (*spi.SignalWait, error)
	// key is the job's idempotency key: a recurring job's names its slot.
	key string
	// clock is the engine's (Sleep's time); steps the run's view of its
	// durable steps (see steps.go).
	clock Clock
	steps steps
}

// PropertyReader reads job properties: spi.JobPropertyStore's read side.
type PropertyReader interface {
	GetProperty(ctx context.Context, jobID uuid.UUID, key string) (string, bool, error)
	GetPropertiesByPrefix(ctx context.Context, jobID uuid.UUID, prefix string) (map[string]string, error)
}

// JobContextOptions are what an engine gives a JobContext beyond the job.
// The zero value gives a context without state.
type JobContextOptions struct {
	// Logger is the logger to tag; nil means slog.Default().
	Logger *slog.Logger
	// Loggers makes the run's logger from Logger; nil means
	// DefaultJobLoggers.
	Loggers JobLoggerFactory
	// State is the store's job state, nil where it has none.
	State spi.JobStateStore
	// Properties reads the job's properties, nil where the store has none.
	Properties PropertyReader
	// Pipeline encodes and decodes state (the payload codecs apply to it,
	// as to every surface); nil means JSON without codecs.
	Pipeline *Pipeline
	// Parents reads a workflow job's finished dependencies (as
	// Client.Parents does); nil where the store keeps no workflows.
	Parents func(ctx context.Context, jobID uuid.UUID) ([]Parent, error)
	// Signal reads a job's signal wait (the engine reads it from the store);
	// nil where the store keeps no signals.
	Signal func(ctx context.Context, jobID uuid.UUID) (*spi.SignalWait, error)
	// Clock is the engine's clock, which Sleep reads; nil means the
	// system clock.
	Clock Clock
}

// NewJobContextWith builds the JobContext of j's next run, as NewJobContext
// does, with access to its job state fenced by j's claim sequence.
func NewJobContextWith(j *Job, o JobContextOptions) *JobContext {
	jc := newJobContext(j, o.Logger, o.Loggers)
	jc.claimSeq, jc.state, jc.props, jc.pipe = j.ClaimSeq, o.State, o.Properties, o.Pipeline
	jc.deps, jc.loadDeps = j.DependencyCount, o.Parents
	jc.loadSignal, jc.clock = o.Signal, o.Clock
	if jc.pipe == nil {
		jc.pipe, _ = NewPipeline(nil, 0)
	}
	return jc
}

// now is the time on the run's clock.
func (j *JobContext) now() time.Time {
	if j.clock == nil {
		return time.Now()
	}
	return j.clock.Now()
}

// Property returns the job's property key (WithProperty); found is false
// when the job has none of that key. It fails with ErrUnsupported where the
// store keeps no properties.
func (j *JobContext) Property(ctx context.Context, key string) (value string, found bool, err error) {
	if j.props == nil {
		return "", false, fmt.Errorf("properties of job %s: %w", j.ID, ErrUnsupported)
	}
	return j.props.GetProperty(ctx, j.ID, key)
}

// Properties returns the job's properties whose key starts with prefix
// ("" for all of them).
func (j *JobContext) Properties(ctx context.Context, prefix string) (map[string]string, error) {
	if j.props == nil {
		return nil, fmt.Errorf("properties of job %s: %w", j.ID, ErrUnsupported)
	}
	return j.props.GetPropertiesByPrefix(ctx, j.ID, prefix)
}

// SurfaceState is a job's state, as the payload pipeline sees it.
const SurfaceState Surface = "state"

func (j *JobContext) stateStore() (spi.JobStateStore, error) {
	if j.state == nil {
		return nil, fmt.Errorf("job state of job %s: %w", j.ID, ErrUnsupported)
	}
	return j.state, nil
}

// State reads the job's state in namespace into v and returns its version;
// found is false (and v untouched) when none was written yet. State is kept
// across retries and crash redeliveries of the job, so a body can resume
// where an earlier run left off.
func (j *JobContext) State(ctx context.Context, namespace string, v any) (version int64, found bool, err error) {
	st, err := j.stateStore()
	if err != nil {
		return 0, false, err
	}
	vs, ok, err := st.GetState(ctx, j.ID, namespace)
	if err != nil || !ok {
		return 0, false, err
	}
	if err := j.pipe.Decode(ctx, JobRef(SurfaceState, j.ID), vs.JSON, v); err != nil {
		return 0, false, fmt.Errorf("ratchet: job state %q of job %s: %w", namespace, j.ID, err)
	}
	return vs.Version, true, nil
}

// InitState writes the job's first state in namespace (version 0). It fails
// with ErrStateConflict when state exists, and with ErrSuperseded when this
// run no longer owns the job (stop then).
func (j *JobContext) InitState(ctx context.Context, namespace string, v any) error {
	return j.writeState(ctx, SurfaceState, namespace, v, func(st spi.JobStateStore, b []byte) (spi.StateWriteResult, error) {
		return st.InitState(ctx, j.ID, namespace, b, j.claimSeq)
	})
}

// UpdateState replaces the job's state in namespace if its version is still
// expectedVersion (the next version is expectedVersion + 1). It fails with
// ErrStateConflict when the version moved on (read it again and retry), and
// with ErrSuperseded when this run no longer owns the job (stop then).
func (j *JobContext) UpdateState(ctx context.Context, namespace string, v any, expectedVersion int64) error {
	return j.writeState(ctx, SurfaceState, namespace, v, func(st spi.JobStateStore, b []byte) (spi.StateWriteResult, error) {
		return st.UpdateState(ctx, j.ID, namespace, b, expectedVersion, j.claimSeq)
	})
}

// writeState encodes v as a value of surface (SurfaceState, or the step
// log's SurfaceSteps) and writes it to namespace with write.
func (j *JobContext) writeState(ctx context.Context, surface Surface, namespace string, v any,
	write func(spi.JobStateStore, []byte) (spi.StateWriteResult, error)) error {
	st, err := j.stateStore()
	if err != nil {
		return err
	}
	if namespace == "" {
		return invalidArg("job state with an empty namespace")
	}
	b, err := j.pipe.Encode(ctx, JobRef(surface, j.ID), j.TaskName, v)
	if err != nil {
		return err
	}
	res, err := write(st, b)
	switch {
	case err != nil:
		return fmt.Errorf("ratchet: job state %q of job %s: %w", namespace, j.ID, err)
	case res == spi.StateSuperseded:
		return fmt.Errorf("job state %q of job %s: %w", namespace, j.ID, ErrSuperseded)
	case res == spi.StateVersionConflict:
		return fmt.Errorf("job state %q of job %s: %w", namespace, j.ID, ErrStateConflict)
	}
	return nil
}

// Parents returns the running workflow job's dependencies as they
// finished, in the order they were declared (Step.After), with their
// results: what a late-bound argument resolver (Task.ResolveArgs) reads. A
// job without dependencies has none. It reads the store once per run.
func (j *JobContext) Parents(ctx context.Context) ([]Parent, error) {
	switch {
	case j.deps == 0 || j.loaded:
		return j.parents, nil
	case j.loadDeps == nil:
		return nil, fmt.Errorf("ratchet: parents of job %s: %w: no workflow store", j.ID, ErrUnsupported)
	}
	ps, err := j.loadDeps(ctx, j.ID)
	if err != nil {
		return nil, err
	}
	j.parents, j.loaded = ps, true
	return ps, nil
}

// NewJobContext builds the JobContext of j's next run (Run = j.Attempts + 1);
// engines and test harnesses use it. Params are copied; a nil logger means
// slog.Default().
func NewJobContext(j *Job, logger *slog.Logger) *JobContext { return newJobContext(j, logger, nil) }

// newJobContext is NewJobContext with the run's logger made by loggers
// (nil: DefaultJobLoggers).
func newJobContext(j *Job, logger *slog.Logger, loggers JobLoggerFactory) *JobContext {
	if logger == nil {
		logger = slog.Default()
	}
	if loggers == nil {
		loggers = DefaultJobLoggers
	}
	run := j.Attempts + 1
	var p map[string]string // nil for none: most jobs have none, and an empty map is an allocation per run
	if len(j.Params) > 0 {
		p = make(map[string]string, len(j.Params))
		for k, v := range j.Params {
			p[k] = v
		}
	}
	return &JobContext{
		ID: j.ID, TaskName: j.TaskName, Run: run, CrashCount: j.CrashCount, Snoozes: j.Snoozes,
		Priority: j.Priority, ScheduledAt: j.ScheduledAt, WorkflowID: j.WorkflowID,
		Logger: loggers.JobLogger(JobLoggerContext{JobID: j.ID, TaskName: j.TaskName, Run: run, CrashCount: j.CrashCount, Base: logger}),
		params: p, key: j.IdempotencyKey,
	}
}

// Slot returns the slot of a job that a recurring schedule fired: the time
// its schedule's expression named, which stays the job's whatever happens
// to its due time (ScheduledAt moves when the job is retried, released at
// a node's graceful stop or recovered after a crash). ok is false for a
// job no schedule fired (TriggerSchedule's included).
func (j *JobContext) Slot() (slot time.Time, ok bool) {
	_, slot, ok = stored.SlotOf(j.key)
	return slot, ok
}

// Param returns the value of a submission param, or "" when unset.
func (j *JobContext) Param(key string) string { return j.params[key] }

// Params returns a copy of all params.
func (j *JobContext) Params() map[string]string {
	p := make(map[string]string, len(j.params))
	for k, v := range j.params {
		p[k] = v
	}
	return p
}

type jobContextKey struct{}

// ContextWithJob returns ctx carrying jc.
func ContextWithJob(ctx context.Context, jc *JobContext) context.Context {
	return context.WithValue(ctx, jobContextKey{}, jc)
}

// JobFromContext returns the JobContext of the running job, or false when
// ctx is not a job's context.
func JobFromContext(ctx context.Context) (*JobContext, bool) {
	jc, ok := ctx.Value(jobContextKey{}).(*JobContext)
	return jc, ok && jc != nil
}
