package spi

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// StatusWaiting is the state of a job that waits for a signal (a
// SignalStore): it is written WAITING and becomes PENDING when the signal is
// delivered or its deadline passes, or CANCELLED by CancelJob.
const StatusWaiting Status = "WAITING"

// SignalOutcome is how a job's wait for a signal ended: exactly one of
// DELIVERED, TIMED_OUT or CANCELLED (the spec's SignalDecision).
type SignalOutcome string

// The signal outcomes. The empty outcome means the job still waits.
const (
	SignalDelivered SignalOutcome = "DELIVERED"
	SignalTimedOut  SignalOutcome = "TIMED_OUT"
	SignalCancelled SignalOutcome = "CANCELLED"
)

// The longest signal name and key, in bytes, that every store keeps.
const (
	MaxSignalNameBytes = 255
	MaxSignalKeyBytes  = 255
)

// SignalWait is a job's wait for a signal: what the inserter asks for
// (Name, and optionally Key and Deadline) and, once resolved, how it ended.
type SignalWait struct {
	// Name is the signal awaited; required.
	Name string
	// Key, when not empty, lets DeliverSignalByKey find the job.
	Key string
	// Deadline is when the wait times out; zero waits for ever.
	Deadline time.Time

	// Outcome is empty while the job waits, then how the wait ended;
	// Payload the delivered signal's payload (already through the payload
	// pipeline; nil unless delivered) and ResolvedAt when it ended. Reads
	// fill them; inserts ignore them.
	Outcome    SignalOutcome
	Payload    []byte
	ResolvedAt time.Time
}

// clone returns a deep copy of w.
func (w *SignalWait) clone() *SignalWait {
	if w == nil {
		return nil
	}
	c := *w
	c.Payload = cloneBytes(w.Payload)
	return &c
}

// validateSignal checks the wait a job is inserted with.
func validateSignal(j *Job) error {
	w := j.Signal
	switch {
	case w == nil:
		return nil
	case w.Name == "":
		return fmt.Errorf("job %s awaits a signal with an empty name", j.ID)
	case len(w.Name) > MaxSignalNameBytes:
		return fmt.Errorf("job %s: signal name %.40q... is %d bytes, over the limit of %d", j.ID, w.Name, len(w.Name), MaxSignalNameBytes)
	case len(w.Key) > MaxSignalKeyBytes:
		return fmt.Errorf("job %s: signal key %.40q... is %d bytes, over the limit of %d", j.ID, w.Key, len(w.Key), MaxSignalKeyBytes)
	case len(j.Dependencies) > 0:
		return fmt.Errorf("job %s awaits a signal and has dependencies; a workflow step cannot await a signal yet", j.ID)
	}
	return nil
}

// SignalMetrics is implemented by a MetricsCollector that also counts
// signal waits (the spec's signalWaiting, signalDelivered, signalTimedOut
// and signalCancelled): the client reports a wait it writes, delivers or
// cancels, the engine's signal sweeper a wait that timed out. NoOpMetrics
// implements it.
type SignalMetrics interface {
	SignalWaiting(ctx context.Context, id uuid.UUID, task, name string)
	SignalDelivered(ctx context.Context, id uuid.UUID, task, name string)
	SignalTimedOut(ctx context.Context, id uuid.UUID, task, name string)
	SignalCancelled(ctx context.Context, id uuid.UUID, task, name string)
}

// SignalWaiting does nothing.
func (NoOpMetrics) SignalWaiting(context.Context, uuid.UUID, string, string) {}

// SignalDelivered does nothing.
func (NoOpMetrics) SignalDelivered(context.Context, uuid.UUID, string, string) {}

// SignalTimedOut does nothing.
func (NoOpMetrics) SignalTimedOut(context.Context, uuid.UUID, string, string) {}

// SignalCancelled does nothing.
func (NoOpMetrics) SignalCancelled(context.Context, uuid.UUID, string, string) {}

// ResolvedSignal names a job whose wait a SignalStore call ended.
type ResolvedSignal struct {
	JobID    uuid.UUID
	TaskName string
	// Name is the signal the job waited for.
	Name string
}

// SignalStore is implemented by stores that keep jobs waiting for signals
// (docs/architecture.md, "Workflows": exactly one of delivered, timed out, cancelled
// wins).
//
// Such a store also extends Store's methods:
//
//   - InsertJobs writes a job with a Signal as WAITING (never claimed).
//   - CancelJob also cancels a WAITING job, resolving its wait CANCELLED at
//     now.
//   - GetJob, ListJobs and WorkflowJobs fill Job.Signal (with its outcome
//     once resolved) for a job inserted with one; ClaimJobs need not (the
//     engine reads it with GetJob when a body asks for it), so that claims
//     cost nothing more.
//   - CompleteJobs applies OutcomeWaiting (ratchet.WaitSignal: a RUNNING
//     job starts a wait): the job becomes WAITING and Completion.Signal,
//     unresolved, replaces the wait it had (one per job), in the same
//     atomic write as the fenced status change; a superseded completion
//     writes neither.
//   - ArchiveJobs may drop the wait of the jobs it archives.
//
// Every resolution (delivery, timeout, cancel) is one atomic write that
// requires the job to be WAITING, so two of them racing resolve the wait
// once: the other finds the job no longer WAITING.
type SignalStore interface {
	// DeliverSignal delivers the signal name with payload to job id at now:
	// a job WAITING for name becomes PENDING, due at now, its wait
	// resolved DELIVERED with the payload. Otherwise nothing is written: an
	// unknown job wraps ErrNotFound; a job that is not WAITING (never
	// awaited a signal, or its wait was resolved already) or waits for
	// another name wraps ErrInvalidState.
	DeliverSignal(ctx context.Context, id uuid.UUID, name string, payload []byte, now time.Time) (ResolvedSignal, error)
	// DeliverSignalByKey delivers the signal name with payload, as
	// DeliverSignal, to every job WAITING for name with Signal.Key key, at
	// most limit of them, in id order; it returns those it delivered to
	// (none is not an error). A key names a group of waiting jobs: one
	// delivery wakes them all, each once.
	DeliverSignalByKey(ctx context.Context, key, name string, payload []byte, now time.Time, limit int) ([]ResolvedSignal, error)
	// ExpireSignals times out, at now, up to limit WAITING jobs whose
	// deadline is not after now (in deadline order): each becomes PENDING,
	// due at now, its wait resolved TIMED_OUT. It returns them.
	ExpireSignals(ctx context.Context, now time.Time, limit int) ([]ResolvedSignal, error)
}
