package ratchet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// StepsNamespace is the job-state namespace (JobContext.State) where a
// job's durable steps, sleeps and version markers are recorded.
const StepsNamespace = "ratchet.steps"

// SurfaceSteps is a job's durable step log (RunStep, Sleep, StepVersion,
// WaitSignal), as the payload pipeline sees it: its size limit applies to
// the whole log, and a codec that binds a value to its place (encryption)
// binds the log to its job and this surface. A log written before the
// surface existed, bound to SurfaceState, still opens; its next write
// binds it to SurfaceSteps.
const SurfaceSteps Surface = "steps"

// decodeSteps decodes job id's step log b into l, bound to SurfaceSteps
// or, for a log written before that surface existed, to SurfaceState.
func decodeSteps(ctx context.Context, pipe *Pipeline, id uuid.UUID, b []byte, l *stepLog) error {
	err := pipe.Decode(ctx, JobRef(SurfaceSteps, id), b, l)
	if err != nil && pipe.Decode(ctx, JobRef(SurfaceState, id), b, l) == nil {
		return nil
	}
	return err
}

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
// time, a StepVersion's version, or a WaitSignal's wait and how it ended.
type stepRecord struct {
	Kind    string          `json:"kind"` // "step", "sleep", "version" or "wait"
	Name    string          `json:"name"` // a wait's: the signal's
	Result  json.RawMessage `json:"result,omitempty"`
	Wake    time.Time       `json:"wake,omitzero"`
	Version int             `json:"version,omitempty"`
	// A wait's key and deadline; the job's snooze count when the wait was
	// recorded (its run made the job WAITING when a later run finds the
	// count above it); and, once a run read how it ended, the outcome,
	// when, and the delivered payload (as the pipeline encoded it).
	Key      string    `json:"key,omitempty"`
	Deadline time.Time `json:"deadline,omitzero"`
	Snoozes  int       `json:"snoozes,omitempty"`
	Outcome  string    `json:"outcome,omitempty"`
	At       time.Time `json:"at,omitzero"`
	Payload  []byte    `json:"payload,omitempty"`
}

// steps is a run's view of its job's step log: read once, at the run's
// first step, and appended to by fenced writes.
type steps struct {
	loaded  bool
	version int64 // the stored log's version; a log is stored once it holds a record
	log     stepLog
	next    int   // the position the run's next step takes
	lost    error // a write was superseded: this run no longer owns the job
	// parked is the sentinel a Sleep or a WaitSignal returned, which the
	// body must return (Returned checks it).
	parked error
}

func (j *JobContext) loadSteps(ctx context.Context) error {
	if j.steps.loaded {
		return nil
	}
	st, err := j.stateStore()
	if err != nil {
		return err
	}
	vs, ok, err := st.GetState(ctx, j.ID, StepsNamespace)
	if err != nil {
		return err
	}
	var l stepLog
	if ok {
		if err := decodeSteps(ctx, j.pipe, j.ID, vs.JSON, &l); err != nil {
			return fmt.Errorf("ratchet: the step log of job %s: %w", j.ID, err)
		}
	}
	j.steps = steps{loaded: true, version: vs.Version, log: l}
	return nil
}

// record appends rec to the log with one write fenced by the run's claim.
func (j *JobContext) record(ctx context.Context, rec stepRecord) error {
	n := len(j.steps.log.Steps)
	return j.writeLog(ctx, stepLog{Steps: append(j.steps.log.Steps[:n:n], rec)})
}

// settle replaces the record at position i with rec (a wait, once a run
// read how it ended), with one write fenced by the run's claim.
func (j *JobContext) settle(ctx context.Context, i int, rec stepRecord) error {
	steps := slices.Clone(j.steps.log.Steps)
	steps[i] = rec
	return j.writeLog(ctx, stepLog{Steps: steps})
}

// writeLog stores next in place of the run's log, with one write fenced
// by the run's claim.
func (j *JobContext) writeLog(ctx context.Context, next stepLog) error {
	n := len(j.steps.log.Steps) // a log is stored once it holds a record
	err := j.writeState(ctx, SurfaceSteps, StepsNamespace, next, func(st spi.JobStateStore, b []byte) (spi.StateWriteResult, error) {
		if n > 0 {
			return st.UpdateState(ctx, j.ID, StepsNamespace, b, j.steps.version, j.claimSeq)
		}
		return st.InitState(ctx, j.ID, StepsNamespace, b, j.claimSeq)
	})
	if errors.Is(err, ErrSuperseded) && bug("step-recorded-past-its-claim") { // planted: a run that lost its claim records anyway
		err = j.writeState(ctx, SurfaceSteps, StepsNamespace, next, func(st spi.JobStateStore, b []byte) (spi.StateWriteResult, error) {
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
	j.steps.parked = e
	return e
}

// WaitError is the error WaitSignal returns for the body to return: the
// job waits, WAITING, for the signal Name (under Key, when not empty)
// until Deadline (zero: for ever), and its next run passes the
// WaitSignal with how the wait ended.
type WaitError struct {
	Name, Key string
	Deadline  time.Time
}

// Error describes the wait.
func (e *WaitError) Error() string {
	if e.Deadline.IsZero() {
		return fmt.Sprintf("ratchet: waiting for signal %q", e.Name)
	}
	return fmt.Sprintf("ratchet: waiting for signal %q until %s", e.Name, e.Deadline.UTC().Format(time.RFC3339Nano))
}

// WaitOption configures a WaitSignal.
type WaitOption func(*waitConfig)

type waitConfig struct{ key string }

// WaitKey gives the wait the key by which Client.SignalByKey finds the
// job (an order number, a user id), as WithSignalKey does for a job
// submitted waiting. At most 255 bytes.
func WaitKey(key string) WaitOption { return func(c *waitConfig) { c.key = key } }

// WaitSignal waits durably for the signal name, at most timeout (zero
// waits for ever), from inside a job's body. The first run that reaches
// it records the wait and returns a *WaitError, which the body must
// return at once: the job then becomes WAITING, its slot free and no
// attempt spent (it counts as a snooze, toward WithMaxSnoozes), until
// Client.Signal (or Client.SignalByKey, with WaitKey) delivers the
// signal, the timeout passes (the engine's signal sweeper), or the job
// is cancelled. The body then runs again from the top: its recorded
// steps return their results without running again, and this WaitSignal
// returns how the wait ended, SignalDelivered with the payload or
// SignalTimedOut, as every later run of the job will. A body that
// returns anything else after WaitSignal asked it to return its error
// fails for good, saying so.
//
// A signal sent by Client.Signal while the run that reached WaitSignal is
// still returning (the job RUNNING, the wait recorded) is delivered once
// the job waits: Signal reads the job until then, for up to 30 s. One
// sent earlier, before the run reached WaitSignal, is refused with
// ErrInvalidState, as for any job not waiting: signals are not kept for a
// job that will wait later; nor does SignalByKey find a job before it
// waits. WaitSignal needs a store that keeps signals and
// job state; outside a job's body it fails with ErrUnsupported. The
// payload is kept in the job's step log (through the payload pipeline,
// whose size limit applies to the whole log).
func WaitSignal(ctx context.Context, name string, timeout time.Duration, opts ...WaitOption) (*SignalResult, error) {
	var cfg waitConfig
	for _, o := range opts {
		o(&cfg)
	}
	j, ok := JobFromContext(ctx)
	switch {
	case name == "":
		return nil, invalidArg("WaitSignal with an empty signal name")
	case len(name) > spi.MaxSignalNameBytes || len(cfg.key) > spi.MaxSignalKeyBytes:
		return nil, invalidArg("WaitSignal(%.40q): the signal name and key are at most %d bytes", name, spi.MaxSignalNameBytes)
	case timeout < 0:
		return nil, invalidArg("WaitSignal(%q) with a negative timeout %s", name, timeout)
	case !ok:
		return nil, fmt.Errorf("ratchet: WaitSignal(%q) outside a job's body: %w: only a running job can wait for a signal", name, ErrUnsupported)
	case j.loadSignal == nil:
		return nil, fmt.Errorf("ratchet: WaitSignal(%q) in job %s: %w: the store keeps no signals", name, j.ID, ErrUnsupported)
	}
	if err := j.begin(ctx); err != nil {
		return nil, err
	}
	rec, err := j.position("wait", name)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		w := stepRecord{Kind: "wait", Name: name, Key: cfg.key, Snoozes: j.Snoozes}
		if timeout > 0 {
			w.Deadline = j.now().Add(timeout).UTC().Truncate(time.Microsecond)
		}
		if err := j.record(ctx, w); err != nil {
			return nil, fmt.Errorf("ratchet: wait for signal %q: %w", name, err)
		}
		return nil, j.park(&w)
	}
	if rec.Outcome == "" {
		if j.Snoozes <= rec.Snoozes && !bug("wait-resumed-before-it-began") {
			// The run that recorded the wait ended before the job became
			// WAITING (it crashed, or was released): wait now. A count
			// below the record's was reset by a dead-letter retry: the
			// record takes the job's count, so that the run after this
			// wait knows it waited.
			if rec.Snoozes != j.Snoozes {
				again := *rec
				again.Snoozes = j.Snoozes
				if err := j.settle(ctx, j.steps.next, again); err != nil {
					return nil, fmt.Errorf("ratchet: wait for signal %q: %w", name, err)
				}
				rec = &j.steps.log.Steps[j.steps.next]
			}
			return nil, j.park(rec)
		}
		sw, err := j.loadSignal(ctx, j.ID)
		if err != nil {
			return nil, fmt.Errorf("ratchet: wait for signal %q: %w", name, err)
		}
		if sw == nil || sw.Name != name || sw.Outcome == "" {
			return nil, fmt.Errorf("%w: job %s recorded a wait for signal %q, and its wait is %s", ErrInvalidState, j.ID, name, describeWait(sw))
		}
		done := *rec
		done.Outcome, done.At, done.Payload = string(sw.Outcome), sw.ResolvedAt, sw.Payload
		if err := j.settle(ctx, j.steps.next, done); err != nil {
			return nil, fmt.Errorf("ratchet: wait for signal %q: %w", name, err)
		}
		rec = &j.steps.log.Steps[j.steps.next]
	}
	j.steps.next++
	return &SignalResult{Name: rec.Name, Key: rec.Key, Outcome: SignalOutcome(rec.Outcome), At: rec.At,
		payload: rec.Payload, pipe: j.pipe, job: j.ID}, nil
}

// park returns the WaitError of the wait rec, which the body must return.
func (j *JobContext) park(rec *stepRecord) error {
	e := &WaitError{Name: rec.Name, Key: rec.Key, Deadline: rec.Deadline}
	j.steps.parked = e
	return e
}

// describeWait names a job's wait for an error.
func describeWait(w *spi.SignalWait) string {
	switch {
	case w == nil:
		return "none"
	case w.Outcome == "":
		return fmt.Sprintf("for signal %q, unresolved", w.Name)
	}
	return fmt.Sprintf("for signal %q, %s", w.Name, w.Outcome)
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
// err itself, or, when a Sleep or a WaitSignal asked the body to return
// its error and the body returned something else, a final failure that
// says so (the sleep or the wait would otherwise be lost).
func (j *JobContext) Returned(err error) error {
	var sleep *SleepError
	var wait *WaitError
	switch s := j.steps.parked; s.(type) {
	case nil:
		return err
	case *SleepError:
		if errors.As(err, &sleep) {
			return err
		}
		return DoNotRetry(fmt.Errorf("ratchet: the body of job %s returned %v after ratchet.Sleep asked it to return its error (%v); return Sleep's error as it is", j.ID, err, s))
	default:
		if errors.As(err, &wait) {
			return err
		}
		return DoNotRetry(fmt.Errorf("ratchet: the body of job %s returned %v after ratchet.WaitSignal asked it to return its error (%v); return WaitSignal's error as it is", j.ID, err, s))
	}
}

// StepInfo is one recorded durable step of a job, as Client.JobSteps
// reports it: what an operator needs to see how far the job got, without
// the step's result (which may hold what masking would hide).
type StepInfo struct {
	// Kind is "step" (RunStep), "sleep" (Sleep), "version"
	// (StepVersion) or "wait" (WaitSignal).
	Kind string `json:"kind"`
	// Name is a step's or a version marker's name, a wait's signal;
	// empty for a sleep.
	Name string `json:"name,omitempty"`
	// Wake is a sleep's wake-up time.
	Wake time.Time `json:"wake,omitzero"`
	// Version is a version marker's version.
	Version int `json:"version,omitempty"`
	// Deadline is a wait's deadline (zero: none); Outcome how it ended,
	// once a run of the job read it (empty before).
	Deadline time.Time `json:"deadline,omitzero"`
	Outcome  string    `json:"outcome,omitempty"`
}

// JobSteps returns the durable steps job id recorded (RunStep, Sleep,
// StepVersion, WaitSignal), in order, without their results; none for a job that
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
	if err := decodeSteps(ctx, c.pipe, id, vs.JSON, &l); err != nil {
		return nil, fmt.Errorf("ratchet: steps of job %s: %w", id, err)
	}
	out := make([]StepInfo, len(l.Steps))
	for i, r := range l.Steps {
		out[i] = StepInfo{Kind: r.Kind, Name: r.Name, Wake: r.Wake, Version: r.Version, Deadline: r.Deadline, Outcome: r.Outcome}
	}
	return out, nil
}
