package ratchet

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// DebounceOption changes how WithDebounce folds a burst into one job.
type DebounceOption func(*debounce)

// debounce is a submission's WithDebounce.
type debounce struct {
	key      string
	window   time.Duration
	leading  bool
	lastArgs bool
}

// DebounceLeading makes the burst's job due at the window's start, when
// the first submission is made, instead of at its end: the job runs at
// once, and the submissions until the window ends join it whatever its
// state (running, finished). It takes the first submission's arguments.
func DebounceLeading() DebounceOption { return func(d *debounce) { d.leading = true } }

// DebounceLastArgs makes the burst's job run with the last submission's
// arguments instead of the first's: each submission that joins writes its
// arguments over the job's, in its own write (transaction). It applies to
// a trailing window only, and not with payload codecs (an encrypted
// payload is sealed for its own job's id).
func DebounceLastArgs() DebounceOption { return func(d *debounce) { d.lastArgs = true } }

// allStates are every job state: a leading window is held in any.
var allStates = []Status{StatusPending, StatusRunning, StatusWaiting, StatusBlocked, StatusSucceeded, StatusFailed, StatusCancelled, StatusSkipped}

// WithDebounce folds a burst of submissions with the same key (and task)
// into one job: the first submission opens a window of the given length
// and writes the job, due at the window's end; the submissions made in the
// window (by their client's clock) join it, write nothing, and return its
// id. Once the window has ended, or its job has started, the next
// submission opens a new one. DebounceLeading and DebounceLastArgs change
// when the job is due and which arguments it runs with.
//
// As WithUnique, it is decided in the database on the key's row, so that
// submissions from many processes at once take turns; a submission InTx
// joins (and, with DebounceLastArgs, hands over its arguments) only when
// its transaction commits. It submits one job at a time, and goes with
// neither WithUnique, WithIdempotencyKey, WithDelay nor At; the store
// must keep unique keys (spi.UniqueStore).
func WithDebounce(key string, window time.Duration, opts ...DebounceOption) SubmitOption {
	return func(c *submitConfig) {
		switch {
		case key == "":
			c.errs = append(c.errs, invalidArg("WithDebounce: empty key"))
			return
		case window <= 0:
			c.errs = append(c.errs, invalidArg("WithDebounce: the window must be positive (got %s)", window))
			return
		}
		d := &debounce{key: key, window: window}
		for _, o := range opts {
			o(d)
		}
		if d.leading && d.lastArgs {
			c.errs = append(c.errs, invalidArg("WithDebounce: DebounceLastArgs needs a trailing window, not DebounceLeading (the job runs before the last arguments come)"))
			return
		}
		c.debounce = d
	}
}

// uniqueFor returns the uniqueness of a debounced job of task submitted
// at now, and when it is due.
func (d *debounce) uniqueFor(task string, now time.Time) (*spi.Unique, time.Time) {
	h := sha256.New()
	h.Write([]byte("ratchet/debounce/v1\x00"))
	h.Write([]byte(task))
	h.Write([]byte{0})
	h.Write([]byte(d.key))
	end := now.Add(d.window)
	u := &spi.Unique{Key: "d1:" + hex.EncodeToString(h.Sum(nil)), Until: end, Replace: d.lastArgs}
	if bug("debounce-window-doubled") {
		u.Until = now.Add(2 * d.window)
	}
	if d.leading {
		u.States = allStates
		return u, now
	}
	u.States = []Status{StatusPending}
	return u, end
}

// checkDebounce refuses a debounced submission that cannot be one; n is
// the number of jobs submitted.
func (c *Client) checkDebounce(cfg *submitConfig, n int) error {
	d := cfg.debounce
	switch {
	case d == nil:
		return nil
	case cfg.unique != nil:
		return invalidArg("WithDebounce and WithUnique both say when a submission joins an earlier job; give one")
	case cfg.idempotencyKey != "":
		return invalidArg("WithDebounce and WithIdempotencyKey both say when a submission joins an earlier job; give one")
	case cfg.delay != 0 || !cfg.at.IsZero():
		return invalidArg("WithDebounce decides when its job is due (the window's end, or its start with DebounceLeading): drop WithDelay and At")
	case n > 1:
		return invalidArg("WithDebounce folds submissions into one job: submit one at a time, not %d", n)
	case len(cfg.callbacks) > 0:
		return invalidArg("a job with OnSuccess or OnFailure callbacks cannot be debounced")
	case d.lastArgs && c.pipe.hasCodecs():
		return invalidArg("DebounceLastArgs with payload codecs: a joining submission's arguments are sealed for its own job id, not the job it joins")
	case spi.CapabilitiesOf(c.store).Unique == nil:
		return fmt.Errorf("WithDebounce: %w: store %T keeps no unique keys", ErrUnsupported, c.store)
	}
	return nil
}
