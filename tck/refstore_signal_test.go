package tck

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The reference store's signals: a WAITING job keeps its wait in
// Job.Signal; deliveries, timeouts and cancels find the waiting jobs by a
// scan.

// The defects of signals the self-test plants.
const (
	bugDeliverIgnoresName   bug = "DeliverSignal ignores the signal name"
	bugExpireIgnoresDue     bug = "ExpireSignals ignores the deadline"
	bugKeyIgnoresLimit      bug = "DeliverSignalByKey ignores the limit"
	bugDeliverNotAtomic     bug = "DeliverSignal checks and writes in two steps"
	bugSignalUnchecked      bug = "InsertJobs writes bad signal waits"
	bugCancelWaitingRefused bug = "CancelJob refuses WAITING jobs"
	bugClaimWaiting         bug = "claim takes WAITING jobs"
)

// checkSignal returns why j's signal wait cannot be inserted, or nil.
func (s *refStore) checkSignal(j *spi.Job) error {
	w := j.Signal
	switch {
	case w == nil:
		return nil
	case w.Name == "":
		return fmt.Errorf("job %s: empty signal name", j.ID)
	case len(w.Name) > spi.MaxSignalNameBytes:
		return fmt.Errorf("job %s: signal name of %d bytes", j.ID, len(w.Name))
	case len(w.Key) > spi.MaxSignalKeyBytes:
		return fmt.Errorf("job %s: signal key of %d bytes", j.ID, len(w.Key))
	case len(j.Dependencies) > 0:
		return fmt.Errorf("job %s: a signal wait with dependencies", j.ID)
	}
	return nil
}

// awaitLocked makes a new job with a signal wait WAITING, unresolved.
func (s *refStore) awaitLocked(c *spi.Job) {
	if c.Signal == nil {
		return
	}
	c.Signal.Outcome, c.Signal.Payload, c.Signal.ResolvedAt = "", nil, time.Time{}
	c.Status = spi.StatusWaiting
}

// resolveLocked ends the wait of WAITING job j at now with outcome o.
func (s *refStore) resolveLocked(j *spi.Job, o spi.SignalOutcome, payload []byte, now time.Time) spi.ResolvedSignal {
	j.Signal.Outcome, j.Signal.Payload, j.Signal.ResolvedAt = o, bytes.Clone(payload), now
	if o == spi.SignalCancelled {
		j.Status, j.FinishedAt = spi.StatusCancelled, now
		s.finishedLocked(j, now)
	} else {
		j.Status, j.ScheduledAt = spi.StatusPending, now
	}
	return spi.ResolvedSignal{JobID: j.ID, TaskName: j.TaskName, Name: j.Signal.Name}
}

// waitingLocked returns the WAITING jobs that keep, in id order.
func (s *refStore) waitingLocked(keep func(*spi.Job) bool) []*spi.Job {
	var out []*spi.Job
	for _, r := range s.rows {
		if r.job.Status == spi.StatusWaiting && keep(r.job) {
			out = append(out, r.job)
		}
	}
	slices.SortFunc(out, func(a, b *spi.Job) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	return out
}

// waitsFor returns why job j cannot take signal name, or nil.
func (s *refStore) waitsFor(j *spi.Job, name string) error {
	switch {
	case j.Status != spi.StatusWaiting:
		return fmt.Errorf("%w: job %s is %s, not WAITING", spi.ErrInvalidState, j.ID, j.Status)
	case j.Signal.Name != name:
		return fmt.Errorf("%w: job %s waits for %q, not %q", spi.ErrInvalidState, j.ID, j.Signal.Name, name)
	}
	return nil
}

func (s *refStore) DeliverSignal(_ context.Context, id uuid.UUID, name string, payload []byte, now time.Time) (spi.ResolvedSignal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return spi.ResolvedSignal{}, err
	}
	r, ok := s.rows[id]
	if !ok {
		return spi.ResolvedSignal{}, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	if err := s.waitsFor(r.job, name); err != nil {
		return spi.ResolvedSignal{}, err
	}
	if s.bug == bugDeliverNotAtomic {
		// Checked; lets go of the lock until another call has resolved
		// the wait (or 20 ms passed), then writes anyway: the wait is
		// resolved twice.
		s.mu.Unlock()
		for deadline := time.Now().Add(20 * time.Millisecond); time.Now().Before(deadline); {
			time.Sleep(50 * time.Microsecond)
			s.mu.Lock()
			done := r.job.Status != spi.StatusWaiting
			s.mu.Unlock()
			if done {
				break
			}
		}
		s.mu.Lock()
	}
	return s.resolveLocked(r.job, spi.SignalDelivered, payload, now), nil
}

func (s *refStore) DeliverSignalByKey(_ context.Context, key, name string, payload []byte, now time.Time, limit int) ([]spi.ResolvedSignal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	if key == "" {
		return nil, nil
	}
	var out []spi.ResolvedSignal
	for _, j := range s.waitingLocked(func(j *spi.Job) bool { return j.Signal.Key == key && j.Signal.Name == name }) {
		if len(out) >= limit {
			break
		}
		out = append(out, s.resolveLocked(j, spi.SignalDelivered, payload, now))
	}
	return out, nil
}

func (s *refStore) ExpireSignals(_ context.Context, now time.Time, limit int) ([]spi.ResolvedSignal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	due := s.waitingLocked(func(j *spi.Job) bool {
		d := j.Signal.Deadline
		return !d.IsZero() && !d.After(now)
	})
	slices.SortStableFunc(due, func(a, b *spi.Job) int { return a.Signal.Deadline.Compare(b.Signal.Deadline) })
	var out []spi.ResolvedSignal
	for _, j := range due {
		if len(out) >= limit {
			break
		}
		out = append(out, s.resolveLocked(j, spi.SignalTimedOut, nil, now))
	}
	return out, nil
}

var _ spi.SignalStore = (*refStore)(nil)
