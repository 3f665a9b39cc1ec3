package memory

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.SignalStore = (*Store)(nil)

// await makes a new job with a signal wait WAITING, its wait unresolved.
func (s *Store) await(c *spi.Job) {
	if c.Signal == nil {
		return
	}
	c.Signal.Outcome, c.Signal.Payload, c.Signal.ResolvedAt = "", nil, time.Time{}
	c.Status = spi.StatusWaiting
	s.waits[c.ID] = struct{}{}
}

// rewait gives job j, which a waiting completion just made WAITING, the
// wait w unresolved in place of the one it had (ratchet.WaitSignal).
func (s *Store) rewait(j *spi.Job, w *spi.SignalWait) {
	if s.bug("a waiting completion keeps the old wait") && j.Signal != nil {
		w = j.Signal
	}
	j.Signal = &spi.SignalWait{Name: w.Name, Key: w.Key, Deadline: w.Deadline}
	s.waits[j.ID] = struct{}{}
}

// resolve ends the wait of WAITING job j at now with outcome o: PENDING
// (queued) for a delivery or a timeout, CANCELLED for a cancel.
func (s *Store) resolve(j *spi.Job, o spi.SignalOutcome, payload []byte, now time.Time) spi.ResolvedSignal {
	delete(s.waits, j.ID)
	j.Signal.Outcome, j.Signal.Payload, j.Signal.ResolvedAt = o, slices.Clone(payload), now
	if spi.Woken(o, now).Apply(j); j.Status == spi.StatusPending {
		s.enqueue(j)
	} else {
		s.finished(j, now)
	}
	return spi.ResolvedSignal{JobID: j.ID, TaskName: j.TaskName, Name: j.Signal.Name}
}

// waitingIDs returns the ids of the WAITING jobs that keep, in id order.
func (s *Store) waitingIDs(keep func(*spi.Job) bool) []uuid.UUID {
	var out []uuid.UUID
	for id := range s.waits {
		if keep(s.jobs[id]) {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return out
}

// DeliverSignal implements spi.SignalStore.
func (s *Store) DeliverSignal(_ context.Context, id uuid.UUID, name string, payload []byte, now time.Time) (spi.ResolvedSignal, error) {
	if err := s.lock(); err != nil {
		return spi.ResolvedSignal{}, err
	}
	defer s.unlock()
	j, ok := s.jobs[id]
	switch {
	case !ok:
		return spi.ResolvedSignal{}, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	case j.Status != spi.StatusWaiting:
		return spi.ResolvedSignal{}, fmt.Errorf("%w: job %s is %s, not WAITING for a signal", spi.ErrInvalidState, id, j.Status)
	case j.Signal.Name != name && !s.bug("DeliverSignal ignores the signal name"):
		return spi.ResolvedSignal{}, fmt.Errorf("%w: job %s waits for signal %q, not %q", spi.ErrInvalidState, id, j.Signal.Name, name)
	}
	if s.bug("DeliverSignal checks and writes in two steps") {
		s.awaitResolution(j)
	}
	return s.resolve(j, spi.SignalDelivered, payload, now), nil
}

// DeliverSignalByKey implements spi.SignalStore.
func (s *Store) DeliverSignalByKey(_ context.Context, key, name string, payload []byte, now time.Time, limit int) ([]spi.ResolvedSignal, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	var out []spi.ResolvedSignal
	if key == "" {
		return out, nil
	}
	if s.bug("DeliverSignalByKey ignores the limit") {
		limit = 1 << 30
	}
	for _, id := range s.waitingIDs(func(j *spi.Job) bool { return j.Signal.Key == key && j.Signal.Name == name }) {
		if len(out) >= limit {
			break
		}
		out = append(out, s.resolve(s.jobs[id], spi.SignalDelivered, payload, now))
	}
	return out, nil
}

// ExpireSignals implements spi.SignalStore.
func (s *Store) ExpireSignals(_ context.Context, now time.Time, limit int) ([]spi.ResolvedSignal, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	ids := s.waitingIDs(func(j *spi.Job) bool {
		return (!j.Signal.Deadline.IsZero() && !j.Signal.Deadline.After(now)) || s.bug("ExpireSignals ignores the deadline")
	})
	slices.SortStableFunc(ids, func(a, b uuid.UUID) int { return s.jobs[a].Signal.Deadline.Compare(s.jobs[b].Signal.Deadline) })
	var out []spi.ResolvedSignal
	for _, id := range ids {
		if len(out) >= limit {
			break
		}
		out = append(out, s.resolve(s.jobs[id], spi.SignalTimedOut, nil, now))
	}
	return out, nil
}
