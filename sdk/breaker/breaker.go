package breaker

import (
	"sync"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// State is a breaker's state.
type State int

// The states of a Breaker.
const (
	Closed State = iota
	Open
	HalfOpen
)

// String returns the spec's name of the state.
func (s State) String() string {
	switch s {
	case Closed:
		return "CLOSED"
	case Open:
		return "OPEN"
	case HalfOpen:
		return "HALF_OPEN"
	}
	return "UNKNOWN"
}

// Breaker is one count-based circuit breaker (see the package doc). Its
// methods are safe for concurrent use; times come from the caller, so a
// test drives it with any clock.
type Breaker struct {
	cfg     spi.CircuitBreakerConfig
	changed func(from, to State)

	mu       sync.Mutex
	state    State
	gen      uint64 // advanced by every transition: permits of another state do not count
	ring     []bool // the window while CLOSED: true for a failure
	next     int
	filled   int
	failures int
	openedAt time.Time
	// The HALF_OPEN trial calls admitted and not yet counted, counted,
	// and counted as failures.
	trialsOut, trialsCounted, trialsFailed int
	// probing is true while a probe (see Probe) is out.
	probing bool
}

// New returns a CLOSED breaker; changed, when not nil, is told of every
// transition (outside the breaker's lock).
func New(cfg spi.CircuitBreakerConfig, changed func(from, to State)) (*Breaker, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	return &Breaker{cfg: cfg, changed: changed, ring: make([]bool, cfg.SlidingWindowSize)}, nil
}

// Config returns the breaker's configuration, defaults applied.
func (b *Breaker) Config() spi.CircuitBreakerConfig { return b.cfg }

// Permit is a call's admission; Done counts its outcome.
type Permit struct {
	b     *Breaker
	gen   uint64
	trial bool
	probe bool
}

// Allow admits a call at now, or refuses it (false) while the breaker is
// OPEN, or HALF_OPEN with every trial call out. An OPEN breaker whose wait
// is over turns HALF_OPEN here.
func (b *Breaker) Allow(now time.Time) (Permit, bool) {
	b.mu.Lock()
	from := b.state
	if b.state == Open && !now.Before(b.openedAt.Add(b.cfg.WaitDuration)) {
		b.toLocked(HalfOpen, now)
	}
	p, ok := Permit{b: b, gen: b.gen}, true
	switch b.state {
	case Open:
		ok = false
	case HalfOpen:
		if b.trialsOut+b.trialsCounted >= b.cfg.PermittedCallsInHalfOpen {
			ok = false
		} else {
			b.trialsOut++
			p.trial = true
		}
	}
	to := b.state
	b.mu.Unlock()
	b.tell(from, to)
	return p, ok
}

// Probe admits one call while the breaker is OPEN, before its wait is
// over: a probe of whether what failed answers again. Its success closes
// the breaker at once; its failure opens it again from now (a fresh
// wait); a probe that is not counted changes nothing. One probe is out at
// a time, and the caller paces them (the poller: one per poll interval),
// so that a dependency that keeps failing still gets no more than that.
// Probe refuses (false) when the breaker is not OPEN or a probe is out.
func (b *Breaker) Probe(now time.Time) (Permit, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != Open || b.probing || !now.Before(b.openedAt.Add(b.cfg.WaitDuration)) {
		return Permit{}, false
	}
	b.probing = true
	return Permit{b: b, gen: b.gen, probe: true}, true
}

// Done counts the outcome of the permit's call at now.
func (p Permit) Done(now time.Time, out spi.CallOutcome) {
	b := p.b
	b.mu.Lock()
	from := b.state
	if p.probe {
		b.probing = false
	}
	if p.gen == b.gen {
		if p.probe {
			switch out {
			case spi.CallSucceeded:
				b.toLocked(Closed, now)
			case spi.CallFailed:
				b.toLocked(Open, now)
			}
		} else if p.trial {
			b.trialLocked(now, out)
		} else if b.state == Closed && out != spi.CallNotCounted {
			b.recordLocked(now, out == spi.CallFailed)
		}
	}
	to := b.state
	b.mu.Unlock()
	b.tell(from, to)
}

// State returns the breaker's state at now (an OPEN breaker whose wait is
// over reads HALF_OPEN, as the next Allow would find it).
func (b *Breaker) State(now time.Time) State {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == Open && !now.Before(b.openedAt.Add(b.cfg.WaitDuration)) {
		return HalfOpen
	}
	return b.state
}

// OpenFor returns how long the breaker stays OPEN after now (zero when
// it is not open, or its wait is over): how long a caller refused by
// Allow may wait before it asks again.
func (b *Breaker) OpenFor(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != Open {
		return 0
	}
	return max(0, b.openedAt.Add(b.cfg.WaitDuration).Sub(now))
}

// recordLocked puts a CLOSED call in the window and opens the breaker when
// the failure rate reaches the threshold over at least MinimumCalls.
func (b *Breaker) recordLocked(now time.Time, failed bool) {
	if b.filled == len(b.ring) {
		if b.ring[b.next] {
			b.failures--
		}
	} else {
		b.filled++
	}
	b.ring[b.next] = failed
	if failed {
		b.failures++
	}
	b.next = (b.next + 1) % len(b.ring)
	if b.filled >= b.cfg.MinimumCalls && b.reached(b.failures, b.filled) {
		b.toLocked(Open, now)
	}
}

// trialLocked counts a HALF_OPEN trial call: not counted, it gives its
// permit back; once every permitted trial counted, the breaker closes or
// opens again.
func (b *Breaker) trialLocked(now time.Time, out spi.CallOutcome) {
	b.trialsOut--
	if out == spi.CallNotCounted {
		return
	}
	b.trialsCounted++
	if out == spi.CallFailed {
		b.trialsFailed++
	}
	if b.trialsCounted < b.cfg.PermittedCallsInHalfOpen {
		return
	}
	if b.reached(b.trialsFailed, b.trialsCounted) {
		b.toLocked(Open, now)
	} else {
		b.toLocked(Closed, now)
	}
}

// reached reports whether failures of calls reach the threshold.
func (b *Breaker) reached(failures, calls int) bool {
	return calls > 0 && float64(failures)*100 >= b.cfg.FailureRateThreshold*float64(calls)
}

// toLocked moves to state s at now, with a fresh window or trial count.
func (b *Breaker) toLocked(s State, now time.Time) {
	b.state = s
	b.gen++
	b.trialsOut, b.trialsCounted, b.trialsFailed = 0, 0, 0
	switch s {
	case Open:
		b.openedAt = now
	case Closed:
		clear(b.ring)
		b.next, b.filled, b.failures = 0, 0, 0
	}
}

func (b *Breaker) tell(from, to State) {
	if from != to && b.changed != nil {
		b.changed(from, to)
	}
}
