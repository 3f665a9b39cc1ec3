package engine

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// EventKind says what happened to a job. The outcomes of a run (succeeded,
// retrying, failed, superseded, recovered, released) are the names an
// attempt's record uses.
type EventKind string

// The events an engine publishes, each after its write applied in the store.
const (
	// The outcomes of a run.
	EventSucceeded  EventKind = "succeeded"  // finalized as SUCCEEDED
	EventRetrying   EventKind = "retrying"   // failed, back to PENDING for a retry
	EventSnoozed    EventKind = "snoozed"    // the body snoozed (ratchet.Snooze): back to PENDING, due at RetryAt, no attempt spent
	EventWaiting    EventKind = "waiting"    // the body waits for a signal (ratchet.WaitSignal): WAITING, Name: the signal, no attempt spent
	EventFailed     EventKind = "failed"     // finalized as FAILED (the DLQ)
	EventSuperseded EventKind = "superseded" // the write lost its fence; nothing changed
	EventRecovered  EventKind = "recovered"  // a crashed node's run, taken back by this node's orphan scan (Node: the node it ran on)
	EventReleased   EventKind = "released"   // a run still going when this node's drain timed out, given back to PENDING
	// Workflow jobs finalized without a run.
	EventSkipped   EventKind = "skipped"   // a workflow job finalized as SKIPPED, not run
	EventCancelled EventKind = "cancelled" // a workflow job finalized as CANCELLED, not run
	// The rest of a job's life.
	EventSubmitted      EventKind = "submitted"       // written by this engine's Client (a key's duplicate is not)
	EventStarted        EventKind = "started"         // claimed by this node, its body about to run (Run: this run)
	EventSignalResolved EventKind = "signal-resolved" // a signal wait ended (Name: the signal, Outcome: DELIVERED through this engine's Client, or TIMED_OUT by its sweeper)
	// Of batches and schedules, published by the node whose maintenance
	// service did it.
	EventBatchFinished   EventKind = "batch-finished"   // JobID: the batch's id, Name: its name, Outcome: its outcome
	EventScheduleFired   EventKind = "schedule-fired"   // a recurring schedule's slot made a job (JobID), Name: the schedule
	EventScheduleSkipped EventKind = "schedule-skipped" // a schedule's slots skipped (misfires, overlaps): Skipped of them, Name: the schedule
)

// Event reports one thing that happened to a job, as this engine saw it.
type Event struct {
	Kind    EventKind
	JobID   uuid.UUID
	Task    string
	Run     int       // the run that ended or starts (JobContext.Run: 1 for the first execution)
	Error   string    // sanitized error for retrying and failed
	RetryAt time.Time // retrying and snoozed: when the job is due again
	At      time.Time
	// Name is the signal (signal-resolved, waiting), the batch's name
	// (batch-finished) or the schedule's id (schedule-fired, -skipped).
	Name string
	// Outcome is how a signal wait (DELIVERED, TIMED_OUT) or a batch
	// ended, or the status a recovered job went back to (PENDING, or
	// FAILED past its crash redeliveries).
	Outcome string
	// Node is the node a recovered job had run on.
	Node string
	// Skipped is how many slots a schedule-skipped event skipped.
	Skipped int64
}

// CompletionKinds are the kinds of the completions an engine writes (a
// run's outcome or a workflow job's end without a run): what Subscribe
// delivers.
var CompletionKinds = []EventKind{EventSucceeded, EventRetrying, EventSnoozed, EventWaiting, EventFailed, EventSuperseded, EventSkipped, EventCancelled}

// allKinds are the kinds an engine publishes, each the bit of its index.
var allKinds = []EventKind{EventSucceeded, EventRetrying, EventFailed, EventSuperseded, EventRecovered, EventReleased,
	EventSkipped, EventCancelled, EventSubmitted, EventStarted, EventSignalResolved,
	EventBatchFinished, EventScheduleFired, EventScheduleSkipped, EventSnoozed, EventWaiting}

// kindMask is the set of kinds of ks as bits (every kind for none).
func kindMask(ks []EventKind) uint32 {
	if len(ks) == 0 {
		return 1<<len(allKinds) - 1
	}
	var m uint32
	for _, k := range ks {
		m |= kindBit(k)
	}
	return m
}

// kindBit is the bit of kind k, 0 for a kind the engine does not publish.
func kindBit(k EventKind) uint32 {
	for i, x := range allKinds {
		if x == k {
			return 1 << i
		}
	}
	return 0
}

// SubscribeOptions configure a subscription. The zero value delivers every
// kind through a buffer of 1000 events and drops events while it is full.
type SubscribeOptions struct {
	// Buffer is how many events the channel holds; 1000 when <= 0.
	Buffer int
	// Kinds, when not empty, are the only kinds delivered (CompletionKinds:
	// what Subscribe delivers). An engine builds no event of a kind nobody
	// takes.
	Kinds []EventKind
	// Block never drops an event: when the channel is full, the part of
	// the engine that publishes (a completion write, the executor starting
	// a run, a maintenance service) waits until the subscriber reads. The
	// cost: a subscriber that stops reading stops the engine's work with
	// it, and one that reads slowly slows it down. Without Block a full
	// channel drops the event and counts it (spi.EventMetrics).
	Block bool
}

// subscribers are the engine's subscriptions, read without a lock by the
// parts that publish (a copy-on-write list, and the union of the kinds
// they take), so that publishing a kind nobody takes costs one atomic load.
type subscribers struct {
	mu    sync.Mutex // serializes changes of list
	list  atomic.Pointer[[]*subscription]
	wants atomic.Uint32 // the kinds some subscriber takes
	// dropped counts an event dropped for a subscriber that fell behind.
	dropped func(kind EventKind)
}

// subscription is one subscriber: its channel is closed only once no
// publisher sends on it (sending holds mu for reading).
type subscription struct {
	ch     chan Event
	kinds  uint32
	block  bool
	done   chan struct{} // closed at unsubscribe: a blocked send gives up
	mu     sync.RWMutex
	closed bool
}

// Subscribe returns a channel of the completions this engine writes
// (CompletionKinds) and a function that ends the subscription. The channel
// holds buffer events (1000 when buffer <= 0); when a subscriber falls
// that far behind, further events are dropped for it rather than slowing
// the engine, and counted (spi.EventMetrics). SubscribeWith delivers the
// other kinds, and never drops when asked.
func (e *Engine) Subscribe(buffer int) (<-chan Event, func()) {
	return e.SubscribeWith(SubscribeOptions{Buffer: buffer, Kinds: CompletionKinds})
}

// SubscribeWith returns a channel of this engine's job events as o
// configures it, and a function that ends the subscription (and closes the
// channel).
func (e *Engine) SubscribeWith(o SubscribeOptions) (<-chan Event, func()) {
	if o.Buffer <= 0 {
		o.Buffer = 1000
	}
	sub := &subscription{ch: make(chan Event, o.Buffer), kinds: kindMask(o.Kinds), block: o.Block, done: make(chan struct{})}
	s := &e.subs
	s.change(func(l []*subscription) []*subscription { return append(l, sub) })
	var once sync.Once
	return sub.ch, func() {
		once.Do(func() {
			s.change(func(l []*subscription) []*subscription {
				return slices.DeleteFunc(l, func(x *subscription) bool { return x == sub })
			})
			close(sub.done) // a publisher blocked on a full channel gives up
			sub.mu.Lock()   // waits for the sends in flight
			sub.closed = true
			close(sub.ch)
			sub.mu.Unlock()
		})
	}
}

// change replaces the list by fn of a copy of it.
func (s *subscribers) change(fn func([]*subscription) []*subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var l []*subscription
	if p := s.list.Load(); p != nil {
		l = slices.Clone(*p)
	}
	l = fn(l)
	var wants uint32
	for _, sub := range l {
		wants |= sub.kinds
	}
	s.list.Store(&l)
	s.wants.Store(wants)
}

// wanted reports whether a subscriber takes kind: the parts build no event
// otherwise.
func (s *subscribers) wanted(kind EventKind) bool { return s.wantsBit(kindBit(kind)) }

// wantsBit is wanted for a kind's bit, on the paths taken once per job.
func (s *subscribers) wantsBit(bit uint32) bool { return s.wants.Load()&bit != 0 }

// The bits of the kinds published once per job.
var (
	bitStarted   = kindBit(EventStarted)
	bitSubmitted = kindBit(EventSubmitted)
)

// empty reports whether nobody listens.
func (s *subscribers) empty() bool { return s.wants.Load() == 0 }

// publish hands ev to every subscriber that takes its kind.
func (s *subscribers) publish(ev Event) {
	p := s.list.Load()
	if p == nil {
		return
	}
	bit := kindBit(ev.Kind)
	for _, sub := range *p {
		if sub.kinds&bit != 0 && !sub.send(ev) && s.dropped != nil {
			s.dropped(ev.Kind)
		}
	}
}

// send delivers ev, waiting for room when the subscriber blocks; it
// reports false for an event dropped.
func (sub *subscription) send(ev Event) bool {
	sub.mu.RLock()
	defer sub.mu.RUnlock()
	if sub.closed {
		return true // gone meanwhile: nobody to drop it for
	}
	if sub.block {
		select {
		case sub.ch <- ev:
		case <-sub.done:
		}
		return true
	}
	select {
	case sub.ch <- ev:
		return true
	default:
		return false
	}
}

// publishAll publishes the events of kind that evs builds, when anybody
// takes them.
func (e *Engine) publishAll(kind EventKind, evs func(emit func(Event))) {
	if e.subs.wanted(kind) {
		evs(e.subs.publish)
	}
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
	case c.Outcome == spi.OutcomeSnoozed:
		ev.Kind, ev.RetryAt = EventSnoozed, c.RetryAt
	case c.Outcome == spi.OutcomeWaiting:
		ev.Kind, ev.Name = EventWaiting, c.Signal.Name
	case c.Outcome == spi.OutcomeSkipped:
		ev.Kind = EventSkipped
	case c.Outcome == spi.OutcomeCancelled:
		ev.Kind = EventCancelled
	default:
		ev.Kind = EventFailed
	}
	return ev
}

// droppedEvents reports a dropped event to m's EventMetrics, when it has
// them.
func droppedEvents(m spi.MetricsCollector, node string) func(EventKind) {
	em, ok := m.(spi.EventMetrics)
	if !ok {
		return nil
	}
	return func(k EventKind) { em.EventsDropped(context.Background(), node, string(k)) }
}
