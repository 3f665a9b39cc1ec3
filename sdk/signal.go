package ratchet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Signals: a job submitted with AwaitSignal waits in WAITING, before it
// runs, until the signal it names is delivered to it (Client.Signal by job
// id, Client.SignalByKey by the key it was given), its timeout passes (the
// engine's signal sweeper), or it is cancelled. Exactly one of the three
// resolves the wait (the spec's SignalDecision); the job then runs (after
// a delivery or a timeout) and reads how its wait ended, and the signal's
// payload, with JobContext.Signal.
//
// A signal sent to a job that is not waiting for it (it never did, it
// waits for another name, or its wait was resolved already) is refused
// with ErrInvalidState and nothing is written; a signal is not kept for a
// job that will wait later. Send it once the job exists: a job submitted
// with AwaitSignal waits from its submission. (One exception: Signal to a
// RUNNING job whose body has just reached WaitSignal for that name waits
// until the job waits, then delivers.)

// Job states.
const (
	// StatusWaiting is the state of a job that waits for a signal.
	StatusWaiting = spi.StatusWaiting
)

// SignalOutcome is how a job's wait for a signal ended.
type SignalOutcome = spi.SignalOutcome

// The signal outcomes.
const (
	SignalDelivered = spi.SignalDelivered
	SignalTimedOut  = spi.SignalTimedOut
	SignalCancelled = spi.SignalCancelled
)

// SurfaceSignal is a signal's payload, as the payload pipeline sees it.
const SurfaceSignal Surface = "signal"

// signalByKeyBatch is how many waiting jobs one store call of SignalByKey
// delivers to.
const signalByKeyBatch = 1000

// AwaitSignal makes each submitted job wait for the signal name before it
// runs, at most timeout (zero waits for ever): it is written WAITING and
// becomes PENDING, due at once, when the signal is delivered or the timeout
// passes. The job's body reads the outcome and the payload with
// JobContext.Signal. The store must keep signals (spi.SignalStore); a
// waiting job is due when its wait ends, so AwaitSignal excludes WithDelay
// and At. Name and key are at most 255 bytes.
func AwaitSignal(name string, timeout time.Duration) SubmitOption {
	return func(c *submitConfig) {
		switch {
		case name == "":
			c.errs = append(c.errs, invalidArg("AwaitSignal with an empty signal name"))
		case timeout < 0:
			c.errs = append(c.errs, invalidArg("AwaitSignal(%q) with a negative timeout %s", name, timeout))
		default:
			c.signal, c.signalTimeout = name, timeout
		}
	}
}

// WithSignalKey gives each submitted job the key by which Client.SignalByKey
// finds it (an order number, a user id): one delivery to a key wakes every
// job waiting under it for that signal. It needs AwaitSignal.
func WithSignalKey(key string) SubmitOption {
	return func(c *submitConfig) {
		if key == "" {
			c.errs = append(c.errs, invalidArg("WithSignalKey with an empty key"))
			return
		}
		c.signalKey = key
	}
}

// signalWait checks a submission's signal options and returns the wait of
// its jobs, nil for none.
func (c *Client) signalWait(cfg *submitConfig, now time.Time) (*spi.SignalWait, error) {
	switch {
	case cfg.signal == "" && cfg.signalKey != "":
		return nil, invalidArg("WithSignalKey needs AwaitSignal")
	case cfg.signal == "":
		return nil, nil
	case cfg.delay > 0 || !cfg.at.IsZero():
		return nil, invalidArg("AwaitSignal(%q) with WithDelay or At: a waiting job is due when its wait ends; use the timeout", cfg.signal)
	case spi.CapabilitiesOf(c.store).Signals == nil:
		return nil, fmt.Errorf("AwaitSignal: %w: store %T keeps no signals", ErrUnsupported, c.store)
	}
	w := &spi.SignalWait{Name: cfg.signal, Key: cfg.signalKey}
	if cfg.signalTimeout > 0 {
		w.Deadline = now.Add(cfg.signalTimeout)
	}
	return w, nil
}

// signals returns the store's signals, or an error wrapping ErrUnsupported.
func (c *Client) signals(op string) (spi.SignalStore, error) {
	s := spi.CapabilitiesOf(c.store).Signals
	if s == nil {
		return nil, fmt.Errorf("ratchet: %s: %w: store %T keeps no signals", op, ErrUnsupported, c.store)
	}
	return s, nil
}

// encodeSignal serializes a signal's payload through the payload pipeline
// (surface "signal": the size limit and the codecs apply); a nil payload
// is none.
func (c *Client) encodeSignal(ctx context.Context, ref PayloadRef, name string, payload any) ([]byte, error) {
	if payload == nil {
		return nil, nil
	}
	b, err := c.pipe.Encode(ctx, ref, name, payload)
	if err != nil {
		return nil, fmt.Errorf("ratchet: signal %q: %w", name, err)
	}
	return b, nil
}

// Signal delivers the signal name with payload (any value the serializer
// encodes; nil for none) to job id: a job WAITING for name becomes PENDING
// and runs next, its wait DELIVERED. A RUNNING job whose body has just
// reached ratchet.WaitSignal for name (its run is returning, and the
// write that makes it WAITING is on its way) is delivered to once it
// waits: Signal reads it at intervals for up to 30 s meanwhile. A job that is not waiting for name
// gives an error wrapping ErrInvalidState, an unknown one ErrNotFound, an
// oversize payload a *PayloadTooLargeError; then nothing is written.
func (c *Client) Signal(ctx context.Context, id uuid.UUID, name string, payload any) error {
	s, err := c.signals("signal")
	if err != nil {
		return err
	}
	b, err := c.encodeSignal(ctx, JobRef(SurfaceSignal, id), name, payload)
	if err != nil {
		return err
	}
	r, err := s.DeliverSignal(ctx, id, name, b, c.now())
	if errors.Is(err, ErrInvalidState) {
		switch c.aboutToWait(ctx, id, name) {
		case waitingNow: // it became WAITING since the refusal
			r, err = s.DeliverSignal(ctx, id, name, b, c.now())
		case waitingSoon:
			r, err = c.deliverOnceWaiting(ctx, s, id, name, b)
		}
	}
	if err != nil {
		return fmt.Errorf("ratchet: signal %q to job %s: %w", name, id, err)
	}
	c.delivered(ctx, []spi.ResolvedSignal{r})
	return nil
}

// signalSettle bounds how long Signal waits for a RUNNING job that is
// about to wait for the signal (its run reached WaitSignal and is
// returning) to become WAITING.
const signalSettle = 30 * time.Second

// What a job whose store refused a signal is doing (aboutToWait).
type signalWaitState int

const (
	notWaiting  signalWaitState = iota
	waitingNow                  // WAITING: the write that made it so landed after the refusal
	waitingSoon                 // RUNNING, its run returning from WaitSignal
)

// aboutToWait reads job id, whose store refused the signal name: it is
// waitingSoon when RUNNING and its run recorded a wait for name that it
// has not waited yet (ratchet.WaitSignal returned, the completion that
// makes it WAITING is on its way), waitingNow when WAITING (that
// completion landed between the refusal and this read).
func (c *Client) aboutToWait(ctx context.Context, id uuid.UUID, name string) signalWaitState {
	j, err := c.store.GetJob(ctx, id)
	switch {
	case err != nil:
		return notWaiting
	case j.Status == StatusWaiting:
		return waitingNow
	case j.Status != StatusRunning:
		return notWaiting
	}
	steps, err := c.JobSteps(ctx, id)
	if err != nil || len(steps) == 0 {
		return notWaiting
	}
	if last := steps[len(steps)-1]; last.Kind == "wait" && last.Name == name && last.Outcome == "" {
		return waitingSoon
	}
	return notWaiting
}

// deliverOnceWaiting delivers the signal to job id once it is WAITING: it
// reads the job at intervals that double from 10 ms up to 1 s (on the
// client's clock, as WaitJob does) for up to signalSettle, and gives up
// with an error wrapping ErrInvalidState when the job ends otherwise.
func (c *Client) deliverOnceWaiting(ctx context.Context, s spi.SignalStore, id uuid.UUID, name string, payload []byte) (spi.ResolvedSignal, error) {
	wait, waited := waitFirst, time.Duration(0)
	for waited < signalSettle {
		tick, stop := c.after(wait)
		select {
		case <-ctx.Done():
			stop()
			return spi.ResolvedSignal{}, ctx.Err()
		case <-tick:
		}
		stop()
		waited += wait
		wait = min(2*wait, waitMax)
		j, err := c.store.GetJob(ctx, id)
		switch {
		case err != nil:
			return spi.ResolvedSignal{}, err
		case j.Status == StatusWaiting:
			return s.DeliverSignal(ctx, id, name, payload, c.now())
		case j.Status != StatusRunning:
			return spi.ResolvedSignal{}, fmt.Errorf("%w: job %s is %s, not WAITING for a signal", ErrInvalidState, id, j.Status)
		}
	}
	return spi.ResolvedSignal{}, fmt.Errorf("%w: job %s was about to wait for signal %q and is still RUNNING after %s", ErrInvalidState, id, name, signalSettle)
}

// SignalByKey delivers the signal name with payload, as Signal does, to
// every job waiting for name under key (WithSignalKey), each once, and
// returns how many it woke: none is not an error (no job waits under that
// key, or they all were woken already).
func (c *Client) SignalByKey(ctx context.Context, key, name string, payload any) (int, error) {
	s, err := c.signals("signal by key")
	if err != nil {
		return 0, err
	}
	if key == "" {
		return 0, invalidArg("SignalByKey with an empty key")
	}
	// One payload for every job under the key: bound to the key and name.
	b, err := c.encodeSignal(ctx, PayloadRef{Surface: SurfaceSignal, Scope: SignalScope(name, key)}, name, payload)
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		rs, err := s.DeliverSignalByKey(ctx, key, name, b, c.now(), signalByKeyBatch)
		n += len(rs)
		c.delivered(ctx, rs)
		if err != nil {
			return n, fmt.Errorf("ratchet: signal %q to key %q: %w", name, key, err)
		}
		if len(rs) < signalByKeyBatch {
			return n, nil
		}
	}
}

// delivered reports deliveries to the metrics and wakes the local nodes.
func (c *Client) delivered(ctx context.Context, rs []spi.ResolvedSignal) {
	if len(rs) == 0 {
		return
	}
	if m := c.signalMetrics; m != nil {
		for _, r := range rs {
			m.SignalDelivered(ctx, r.JobID, r.TaskName, r.Name)
		}
	}
	if n, ok := c.notifier.(SignalNotifier); ok {
		n.SignalsDelivered(ctx, rs) // before the wakeup: a woken job's start comes after
	}
	if c.notifier != nil {
		c.notifier.NotifyNewWork(PriorityCritical) // the woken jobs' priorities are not read back
	}
}

// SignalResult is how a job's wait for a signal ended, as its body reads it
// with JobContext.Signal.
type SignalResult struct {
	// Name is the signal the job waited for, Key its key (empty for none).
	Name, Key string
	// Outcome is SignalDelivered, SignalTimedOut or SignalCancelled; At
	// when the wait ended.
	Outcome SignalOutcome
	At      time.Time
	payload []byte
	pipe    *Pipeline
	job     uuid.UUID
}

// HasPayload reports whether the delivered signal carried a payload.
func (r *SignalResult) HasPayload() bool { return r.payload != nil }

// Decode decodes the delivered signal's payload into v. It fails when the
// signal carried none (a timeout never does).
func (r *SignalResult) Decode(ctx context.Context, v any) error {
	if r.payload == nil {
		return invalidArg("signal %q (%s) carried no payload", r.Name, r.Outcome)
	}
	ref := PayloadRef{Surface: SurfaceSignal, JobID: r.job}
	if r.Key != "" {
		ref.Scope = SignalScope(r.Name, r.Key)
	}
	if err := r.pipe.Decode(ctx, ref, r.payload, v); err != nil {
		return fmt.Errorf("ratchet: signal %q: %w", r.Name, err)
	}
	return nil
}

// Signal returns how the job's wait for a signal ended (AwaitSignal), or
// nil when the job was not submitted with one. It fails with
// ErrUnsupported where the store keeps no signals.
func (j *JobContext) Signal(ctx context.Context) (*SignalResult, error) {
	if j.loadSignal == nil {
		return nil, fmt.Errorf("signal of job %s: %w", j.ID, ErrUnsupported)
	}
	w, err := j.loadSignal(ctx, j.ID)
	if err != nil || w == nil {
		return nil, err
	}
	return &SignalResult{Name: w.Name, Key: w.Key, Outcome: w.Outcome, At: w.ResolvedAt, payload: w.Payload, pipe: j.pipe, job: j.ID}, nil
}
