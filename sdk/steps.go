package ratchet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// StepsNamespace is the job-state namespace (JobContext.State) where a
// job's durable steps, sleeps and version markers are recorded.
const StepsNamespace = "ratchet.steps"

// ErrStepMismatch is wrapped by the error of a RunStep, Sleep or
// StepVersion that reaches a recorded position under another name: the
// job's step code changed while it was in flight. Guard such a change
// with StepVersion.
var ErrStepMismatch = errors.New("ratchet: the job's steps changed since they were recorded")

// stepLog is what a job's durable steps recorded, in the order its runs
// reached them.
type stepLog struct {
	Steps []stepRecord `json:"steps"`
}

// stepRecord is one recorded step: a Step's result, a Sleep's wake-up
// time, or a StepVersion's version.
type stepRecord struct {
	Kind    string          `json:"kind"` // "step", "sleep" or "version"
	Name    string          `json:"name"`
	Result  json.RawMessage `json:"result,omitempty"`
	Wake    time.Time       `json:"wake,omitzero"`
	Version int             `json:"version,omitempty"`
}

// steps is a run's view of its job's step log: read once, at the run's
// first step, and appended to by fenced writes.
type steps struct {
	loaded  bool
	version int64 // the stored log's version; a log is stored once it holds a record
	log     stepLog
	next    int   // the position the run's next step takes
	lost    error // a write was superseded: this run no longer owns the job
	// sleeping is the sentinel a Sleep returned, which the body must
	// return (Returned checks it).
	sleeping error
}

func (j *JobContext) loadSteps(ctx context.Context) error {
	if j.steps.loaded {
		return nil
	}
	var l stepLog
	version, _, err := j.State(ctx, StepsNamespace, &l)
	if err != nil {
		return err
	}
	j.steps = steps{loaded: true, version: version, log: l}
	return nil
}

// record appends rec to the log with one write fenced by the run's claim.
func (j *JobContext) record(ctx context.Context, rec stepRecord) error {
	n := len(j.steps.log.Steps)
	next := stepLog{Steps: append(j.steps.log.Steps[:n:n], rec)}
	var err error
	if n > 0 {
		err = j.UpdateState(ctx, StepsNamespace, next, j.steps.version)
	} else {
		err = j.InitState(ctx, StepsNamespace, next)
	}
	if errors.Is(err, ErrSuperseded) && bug("step-recorded-past-its-claim") { // planted: a run that lost its claim records anyway
		err = j.writeState(ctx, StepsNamespace, next, func(st spi.JobStateStore, b []byte) (spi.StateWriteResult, error) {
			if n > 0 {
				return st.UpdateStateUnfenced(ctx, j.ID, StepsNamespace, b, j.steps.version)
			}
			return st.InitStateUnfenced(ctx, j.ID, StepsNamespace, b)
		})
	}
	if err != nil {
		if errors.Is(err, ErrSuperseded) {
			j.steps.lost = err
		}
		return err
	}
	if n > 0 {
		j.steps.version++
	}
	j.steps.log = next
	return nil
}

// position is the record at the run's next position, if the log has one,
// checked against the kind and name the code reaches there.
func (j *JobContext) position(kind, name string) (*stepRecord, error) {
	i := j.steps.next
	if i >= len(j.steps.log.Steps) {
		return nil, nil
	}
	rec := &j.steps.log.Steps[i]
	if rec.Kind != kind || rec.Name != name {
		return nil, fmt.Errorf("%w: position %d of job %s holds %s %q, and this run reached %s %q there; guard the change with ratchet.StepVersion",
			ErrStepMismatch, i, j.ID, rec.Kind, rec.Name, kind, name)
	}
	return rec, nil
}

// begin readies the run's next step: the log loaded, the claim not lost.
func (j *JobContext) begin(ctx context.Context) error {
	if j.steps.lost != nil {
		return j.steps.lost
	}
	return j.loadSteps(ctx)
}

// RunStep runs fn once for the job, however many times its body runs: the
// first run that reaches it runs fn and records its result under the
// run's claim (one fenced write of the job's state, outside the job's
// row); a later run (a retry, a crash redelivery, the run after a Sleep)
// that reaches it gets the recorded result without running fn. Steps are
// identified by their order and name: reaching a recorded position under
// another name fails with ErrStepMismatch.
//
// A run that lost its claim (recovered after its node stalled, cancelled)
// cannot record: its write fails with ErrSuperseded, which the body must
// return, and every later RunStep of the run refuses to run its fn. So the
// side effects that can repeat are those of the one fn in flight when a
// run died or lost its claim; a step that completed and was recorded never
// runs again. An fn that fails is not recorded: the retry runs it again.
//
// Outside a job's body (no JobContext in ctx) RunStep just runs fn. The
// results are kept in the job's state (namespace StepsNamespace), through
// the payload pipeline (its size limit and encryption apply to the whole
// log), and need a store with job state.
func RunStep[R any](ctx context.Context, name string, fn func(context.Context) (R, error)) (R, error) {
	var zero R
	j, ok := JobFromContext(ctx)
	if !ok {
		return fn(ctx)
	}
	if err := j.begin(ctx); err != nil {
		return zero, err
	}
	rec, err := j.position("step", name)
	if err != nil {
		return zero, err
	}
	if rec != nil {
		j.steps.next++
		var out R
		if len(rec.Result) > 0 {
			if err := json.Unmarshal(rec.Result, &out); err != nil {
				return zero, fmt.Errorf("ratchet: step %q of job %s: the recorded result does not decode: %w", name, j.ID, err)
			}
		}
		return out, nil
	}
	out, err := fn(ctx)
	if err != nil {
		return zero, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return zero, fmt.Errorf("ratchet: step %q of job %s: the result does not encode: %w", name, j.ID, err)
	}
	if err := j.record(ctx, stepRecord{Kind: "step", Name: name, Result: b}); err != nil {
		return zero, fmt.Errorf("ratchet: step %q: %w", name, err)
	}
	j.steps.next++
	return out, nil
}

// SleepError is the error Sleep returns for the body to return: the job
// snoozes until the sleep's end (a SnoozeError in its chain), and its
// next run passes the Sleep.
type SleepError struct {
	Until  time.Time
	snooze *SnoozeError
}

// Error describes the sleep.
func (e *SleepError) Error() string {
	return "ratchet: sleeping until " + e.Until.UTC().Format(time.RFC3339Nano)
}

// Unwrap returns the snooze that carries the sleep.
func (e *SleepError) Unwrap() error { return e.snooze }

// Sleep sleeps durably for d: the first run that reaches it records its
// wake-up time (now + d on the job's clock) and returns a *SleepError,
// which the body must return at once. The job then goes back to PENDING
// until the wake-up time, its slot free and no attempt spent (a snooze,
// counted against WithMaxSnoozes), and its next run passes the Sleep
// (returning nil) once the time has come, its recorded steps returning
// their results without running again. A body that returns anything else
// after Sleep asked it to return its error fails for good, saying so.
// Outside a job's body Sleep waits d, or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	j, ok := JobFromContext(ctx)
	if !ok {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := j.begin(ctx); err != nil {
		return err
	}
	rec, err := j.position("sleep", "")
	if err != nil {
		return err
	}
	now := j.now()
	if rec == nil {
		wake := now.Add(max(d, 0)).UTC().Truncate(time.Microsecond)
		if err := j.record(ctx, stepRecord{Kind: "sleep", Wake: wake}); err != nil {
			return fmt.Errorf("ratchet: sleep: %w", err)
		}
		rec = &j.steps.log.Steps[j.steps.next]
	}
	if !now.Before(rec.Wake) {
		j.steps.next++
		return nil
	}
	e := &SleepError{Until: rec.Wake, snooze: &SnoozeError{Delay: rec.Wake.Sub(now)}}
	j.steps.sleeping = e
	return e
}

// StepVersion marks a change of a job's step code, as Temporal's
// GetVersion does: a run that reaches it where nothing is recorded yet
// records, and returns, maxVersion; a later run returns what was
// recorded. A job whose earlier runs passed this point before the marker
// existed (its log holds another step there) gets minVersion, and the
// marker takes no position. Branch on the version to keep the steps of the
// jobs in flight as they were.
func StepVersion(ctx context.Context, change string, minVersion, maxVersion int) (int, error) {
	j, ok := JobFromContext(ctx)
	if !ok {
		return maxVersion, nil
	}
	if err := j.begin(ctx); err != nil {
		return 0, err
	}
	i := j.steps.next
	if i < len(j.steps.log.Steps) {
		rec := j.steps.log.Steps[i]
		if rec.Kind != "version" || rec.Name != change {
			return minVersion, nil // recorded before the marker existed
		}
		if rec.Version < minVersion || rec.Version > maxVersion {
			return 0, fmt.Errorf("%w: job %s recorded version %d of change %q, outside %d..%d", ErrStepMismatch, j.ID, rec.Version, change, minVersion, maxVersion)
		}
		j.steps.next++
		return rec.Version, nil
	}
	if err := j.record(ctx, stepRecord{Kind: "version", Name: change, Version: maxVersion}); err != nil {
		return 0, fmt.Errorf("ratchet: step version %q: %w", change, err)
	}
	j.steps.next++
	return maxVersion, nil
}

// Returned is what the engine records for a run whose body returned err:
// err itself, or, when a Sleep asked the body to return its error and the
// body returned something else, a final failure that says so (the sleep
// would otherwise be lost).
func (j *JobContext) Returned(err error) error {
	s := j.steps.sleeping
	if s == nil {
		return err
	}
	var got *SleepError
	if errors.As(err, &got) {
		return err
	}
	return DoNotRetry(fmt.Errorf("ratchet: the body of job %s returned %v after ratchet.Sleep asked it to return its error (%v); return Sleep's error as it is", j.ID, err, s))
}

// StepInfo is one recorded durable step of a job, as Client.JobSteps
// reports it: what an operator needs to see how far the job got, without
// the step's result (which may hold what masking would hide).
type StepInfo struct {
	// Kind is "step" (RunStep), "sleep" (Sleep) or "version"
	// (StepVersion).
	Kind string `json:"kind"`
	// Name is a step's or a version marker's name; empty for a sleep.
	Name string `json:"name,omitempty"`
	// Wake is a sleep's wake-up time.
	Wake time.Time `json:"wake,omitzero"`
	// Version is a version marker's version.
	Version int `json:"version,omitempty"`
}

// JobSteps returns the durable steps job id recorded (RunStep, Sleep,
// StepVersion), in order, without their results; none for a job that
// recorded none, and for one that is archived or unknown (its state is
// not read there). A store without job state gives an error wrapping
// ErrUnsupported.
func (c *Client) JobSteps(ctx context.Context, id uuid.UUID) ([]StepInfo, error) {
	st := spi.CapabilitiesOf(c.store).State
	if st == nil {
		return nil, fmt.Errorf("ratchet: steps of job %s: %w: store %T keeps no job state", id, ErrUnsupported, c.store)
	}
	vs, ok, err := st.GetState(ctx, id, StepsNamespace)
	if errors.Is(err, ErrNotFound) {
		return nil, nil // archived, or no such job: GetJob says which
	}
	if err != nil || !ok {
		return nil, err
	}
	var l stepLog
	if err := c.pipe.Decode(ctx, JobRef(SurfaceState, id), vs.JSON, &l); err != nil {
		return nil, fmt.Errorf("ratchet: steps of job %s: %w", id, err)
	}
	out := make([]StepInfo, len(l.Steps))
	for i, r := range l.Steps {
		out[i] = StepInfo{Kind: r.Kind, Name: r.Name, Wake: r.Wake, Version: r.Version}
	}
	return out, nil
}
