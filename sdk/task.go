package ratchet

import (
	"context"
	"fmt"
	"reflect"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Definition is what an engine needs to run a task by name. [Task] is the
// implementation users create; the engine dispatches only to registered
// definitions, so a stored task name is never resolved to arbitrary code.
type Definition interface {
	// Name is the task's stable name, stored on every job.
	Name() string
	// Execute decodes payload into the task's arguments and runs the task.
	// It returns the task's result (nil for a void task) or its error; a
	// payload that does not decode gives a *PayloadDecodeError wrapped in
	// DoNotRetry.
	Execute(ctx context.Context, payload []byte, ser spi.PayloadSerializer) (any, error)
}

// Void is the result type of a task that returns nothing.
type Void = struct{}

// Task is a typed task: a name and a function from arguments A to a result R.
// Create it with NewTask or NewVoidTask, register it with the engine, and
// submit jobs for it with Submit.
type Task[A, R any] struct {
	name     string
	fn       func(context.Context, A) (R, error)
	void     bool
	defaults []SubmitOption
	service  string // the service whose circuit breaker guards the task; "" for none
	filter   spi.ErrorFilter
	jitter   *float64 // RetryJitter's fraction; nil: the node's
	resolve  func(ctx context.Context, args A, parents []Parent) (A, error)
}

// NewTask defines a task with a result. name must be stable across
// deployments: it is what stored jobs refer to. opts set the defaults of
// every submission of the task (a submission's own options win).
func NewTask[A, R any](name string, fn func(ctx context.Context, args A) (R, error), opts ...SubmitOption) *Task[A, R] {
	return &Task[A, R]{name: name, fn: fn, defaults: opts}
}

// NewVoidTask defines a task without a result.
func NewVoidTask[A any](name string, fn func(ctx context.Context, args A) error, opts ...SubmitOption) *Task[A, Void] {
	var wrapped func(context.Context, A) (Void, error)
	if fn != nil {
		wrapped = func(ctx context.Context, a A) (Void, error) { return Void{}, fn(ctx, a) }
	}
	return &Task[A, Void]{name: name, fn: wrapped, void: true, defaults: opts}
}

// Name returns the task's name.
func (t *Task[A, R]) Name() string { return t.name }

// ProtectedBy puts the task behind the circuit breaker of service (the
// spec's @CircuitBreakerProtected): while that breaker is open, the task's
// jobs do not run and go back to PENDING after the breaker's retry delay,
// without being charged an attempt. filter says which of the body's
// errors count as failures of the service, merged with the breaker's own
// configuration (the zero filter adds nothing: every error counts unless
// the configuration says otherwise). It returns t, so that it chains onto
// NewTask; call it before registering the task.
func (t *Task[A, R]) ProtectedBy(service string, filter spi.ErrorFilter) *Task[A, R] {
	t.service, t.filter = service, filter
	return t
}

// RetryJitter spreads the retry delays of the task's jobs: each delay the
// backoff (or the node's RetryPolicy) gives is drawn uniformly from
// [delay·(1−fraction), delay], so that the jobs that failed together (an
// outage of what they call) do not all retry at the same instant. It
// overrides the node's engine.Options.RetryJitter for this task; 0 makes
// the task's delays exact again (the spec's EXPONENTIAL is exact, and
// that is the default). fraction outside [0, 1] fails the task's
// registration. It returns t, so that it chains onto NewTask.
func (t *Task[A, R]) RetryJitter(fraction float64) *Task[A, R] {
	t.jitter = &fraction
	return t
}

// Jitter returns the fraction of RetryJitter, and false when the task has
// none (the node's applies). The engine reads it of every task that has
// the method.
func (t *Task[A, R]) Jitter() (fraction float64, set bool) {
	if t.jitter == nil {
		return 0, false
	}
	return *t.jitter, true
}

// ResolveArgs gives the task late-bound arguments (the spec's
// PreExecutionArgResolver): before each run of one of its jobs, fn gets the
// stored arguments and the job's parents as they finished (JobContext.Parents:
// in the order the workflow declared them, with their results; none for a
// job outside a workflow), and returns the arguments the body runs with.
// Nothing it returns is stored. An error fails the run through the retry
// policy. Callbacks' and conditions' own arguments are not resolved. It
// returns t, so that it chains onto NewTask; call it before registering
// the task.
func (t *Task[A, R]) ResolveArgs(fn func(ctx context.Context, args A, parents []Parent) (A, error)) *Task[A, R] {
	t.resolve = fn
	return t
}

// Protection returns the service and filter of ProtectedBy ("" when the
// task has none). The engine reads it of every task that has the method.
func (t *Task[A, R]) Protection() (service string, filter spi.ErrorFilter) {
	return t.service, t.filter
}

// Validate reports a task that cannot be registered or submitted: nil, an
// empty name or a nil function.
func (t *Task[A, R]) Validate() error {
	switch {
	case t == nil:
		return invalidArg("nil task")
	case t.name == "":
		return invalidArg("task has an empty name")
	case t.fn == nil:
		return invalidArg("task %q has a nil function", t.name)
	case t.jitter != nil && !(*t.jitter >= 0 && *t.jitter <= 1):
		return invalidArg("task %q: retry jitter %v is not a fraction in [0, 1]", t.name, *t.jitter)
	}
	return nil
}

// Execute implements Definition.
func (t *Task[A, R]) Execute(ctx context.Context, payload []byte, ser spi.PayloadSerializer) (any, error) {
	var args A
	if err := ser.Unmarshal(payload, &args); err != nil {
		return nil, DoNotRetry(&PayloadDecodeError{Task: t.name, Err: err})
	}
	if t.resolve != nil {
		var parents []Parent
		if jc, ok := JobFromContext(ctx); ok {
			var err error
			if parents, err = jc.Parents(ctx); err != nil {
				return nil, fmt.Errorf("ratchet: resolve the arguments of task %q: %w", t.name, err)
			}
		}
		var err error
		if args, err = t.resolve(ctx, args, parents); err != nil {
			return nil, fmt.Errorf("ratchet: resolve the arguments of task %q: %w", t.name, err)
		}
	}
	res, err := t.fn(ctx, args)
	if err != nil {
		return nil, err
	}
	if t.void {
		return nil, nil
	}
	return res, nil
}

// Call runs the task's function directly with args, outside any engine: for
// unit tests of a task body. Put a JobContext in ctx with ContextWithJob to
// give the body a job id, params or a logger.
func (t *Task[A, R]) Call(ctx context.Context, args A) (R, error) {
	if err := t.Validate(); err != nil {
		var zero R
		return zero, err
	}
	return t.fn(ctx, args)
}

// Submit enqueues one job of this task with args. It returns the job's id;
// when an idempotency key matches an existing job, that job's id and nothing
// is written.
func (t *Task[A, R]) Submit(ctx context.Context, c *Client, args A, opts ...SubmitOption) (uuid.UUID, error) {
	ids, err := t.SubmitMany(ctx, c, []A{args}, opts...)
	if err != nil {
		return uuid.Nil, err
	}
	return ids[0], nil
}

// SubmitMany enqueues one job per element of args, all with the same
// options, in one store round trip. Either every job is written or, on
// error, none is. An idempotency key given here applies to the first job
// only; use Submit for keyed jobs.
func (t *Task[A, R]) SubmitMany(ctx context.Context, c *Client, args []A, opts ...SubmitOption) ([]uuid.UUID, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, invalidArg("nil client")
	}
	payloads := make([][]byte, len(args))
	for i, a := range args {
		p, err := c.pipe.Serializer().Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("ratchet: encode arguments of task %q: %w", t.name, err)
		}
		payloads[i] = p
	}
	return c.submit(ctx, t.name, payloads, t.defaults, opts)
}

// Result decodes the stored result of a SUCCEEDED job of this task.
func (t *Task[A, R]) Result(c *Client, j *Job) (R, error) {
	var r R
	if j == nil {
		return r, invalidArg("nil job")
	}
	if j.TaskName != t.name {
		return r, invalidArg("job %s is of task %q, not %q", j.ID, j.TaskName, t.name)
	}
	if j.Status != StatusSucceeded {
		return r, fmt.Errorf("%w: job %s is %s, not SUCCEEDED", ErrInvalidState, j.ID, j.Status)
	}
	if len(j.Result) == 0 {
		return r, fmt.Errorf("ratchet: job %s has no stored result", j.ID)
	}
	if err := c.pipe.Decode(context.Background(), JobRef(SurfaceResult, j.ID), j.Result, &r); err != nil {
		return r, fmt.Errorf("ratchet: decode result of job %s: %w", j.ID, err)
	}
	return r, nil
}

// TypeName returns the name stored as a result's type: the package path and
// name of a named type, otherwise its Go syntax.
func TypeName(v any) string {
	t := reflect.TypeOf(v)
	if t == nil {
		return ""
	}
	if t.Name() != "" && t.PkgPath() != "" {
		return t.PkgPath() + "." + t.Name()
	}
	return t.String()
}
