package engine

import (
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// EventKind says what happened to a job.
type EventKind string

// The events an engine publishes, each after its write applied in the store.
const (
	EventSucceeded  EventKind = "succeeded"  // finalized as SUCCEEDED
	EventRetrying   EventKind = "retrying"   // failed, back to PENDING for a retry
	EventFailed     EventKind = "failed"     // finalized as FAILED (the DLQ)
	EventSuperseded EventKind = "superseded" // the write lost its fence; nothing changed
	EventSkipped    EventKind = "skipped"    // a workflow job finalized as SKIPPED, not run
	EventCancelled  EventKind = "cancelled"  // a workflow job finalized as CANCELLED, not run
)

// Event reports one job outcome written by this engine.
type Event struct {
	Kind    EventKind
	JobID   uuid.UUID
	Task    string
	Run     int       // the run that ended (JobContext.Run: 1 for the first execution)
	Error   string    // sanitized error for retrying and failed
	RetryAt time.Time // retrying only
	At      time.Time
}

type subscribers struct {
	mu   sync.Mutex
	next int
	subs map[int]chan Event
}

// Subscribe returns a channel of this engine's job events and a function
// that ends the subscription. The channel holds buffer events (1000 when
// buffer <= 0); when a subscriber falls that far behind, further events are
// dropped for it rather than slowing the engine.
func (e *Engine) Subscribe(buffer int) (<-chan Event, func()) {
	if buffer <= 0 {
		buffer = 1000
	}
	ch := make(chan Event, buffer)
	s := &e.subs
	s.mu.Lock()
	if s.subs == nil {
		s.subs = map[int]chan Event{}
	}
	id := s.next
	s.next++
	s.subs[id] = ch
	s.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.subs, id)
			s.mu.Unlock()
			close(ch)
		})
	}
}

func (s *subscribers) publish(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.subs {
		select {
		case ch <- ev:
		default:
		}
	}
}

func (s *subscribers) empty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs) == 0
}

func eventOf(c spi.Completion, task string, applied bool) Event {
	ev := Event{JobID: c.JobID, Task: task, Run: c.Attempts, Error: c.LastError, At: c.FinishedAt}
	switch {
	case !applied:
		ev.Kind = EventSuperseded
	case c.Outcome == spi.OutcomeSucceeded:
		ev.Kind = EventSucceeded
	case c.Outcome == spi.OutcomeRetry:
		ev.Kind, ev.RetryAt = EventRetrying, c.RetryAt
	case c.Outcome == spi.OutcomeSkipped:
		ev.Kind = EventSkipped
	case c.Outcome == spi.OutcomeCancelled:
		ev.Kind = EventCancelled
	default:
		ev.Kind = EventFailed
	}
	return ev
}
