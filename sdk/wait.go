package ratchet

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// The intervals at which WaitJob reads a job again: from waitFirst,
// doubling up to waitMax.
const (
	waitFirst = 10 * time.Millisecond
	waitMax   = time.Second
)

// WaitJob waits until job id has finished (SUCCEEDED, FAILED, CANCELLED or
// SKIPPED) and returns it as it ended; it returns ctx's error when ctx
// ends first, and an error wrapping ErrNotFound for an unknown job. A
// FAILED job has ended its retries (the dead-letter queue): WaitJob
// returns it, even though a manual retry may run it again later.
//
// A job that a node of this client's own engine finishes wakes it at once
// (FinishNotifier); so does one that another process's node finishes,
// where the engine's coordinator or store carries WaitJob's notices
// (spi.FinishPublisher: the engine announces the watch, the finishing
// node publishes the end). Otherwise it learns of the end by reading the
// job: at once, then at intervals that double from 10 ms up to 1 s, on
// the client's clock when that clock has timers (a clockwork clock), in
// real time otherwise; so it returns within about a second of the end of
// a job in any case. Task.Wait decodes the result.
func (c *Client) WaitJob(ctx context.Context, id uuid.UUID) (*Job, error) {
	var woken <-chan struct{}
	if n, ok := c.notifier.(FinishNotifier); ok {
		ch, stop := n.WatchFinished(id) // before the first read: no end falls between
		defer stop()
		woken = ch
	}
	wait := waitFirst
	for {
		j, err := c.GetJob(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("ratchet: wait for job %s: %w", id, err)
		}
		if j.Status.Terminal() {
			return j, nil
		}
		tick, stop := c.after(wait)
		select {
		case <-ctx.Done():
			stop()
			return nil, fmt.Errorf("ratchet: wait for job %s (%s): %w", id, j.Status, ctx.Err())
		case <-woken:
			woken = nil // read once more; a job retried since waits out the intervals
		case <-tick:
		}
		stop()
		wait = min(2*wait, waitMax)
	}
}

// after returns a channel that receives once d has passed on the client's
// clock, when it has timers, else in real time; and a function that frees
// the timer.
func (c *Client) after(d time.Duration) (<-chan time.Time, func()) {
	if tc, ok := c.clock.(interface {
		After(time.Duration) <-chan time.Time
	}); ok {
		return tc.After(d), func() {}
	}
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// Wait waits until job id of this task has finished (Client.WaitJob) and
// returns its result. A job that did not succeed gives an error wrapping
// ErrInvalidState that names its status and its last error.
func (t *Task[A, R]) Wait(ctx context.Context, c *Client, id uuid.UUID) (R, error) {
	var r R
	if c == nil {
		return r, invalidArg("nil client")
	}
	j, err := c.WaitJob(ctx, id)
	if err != nil {
		return r, err
	}
	if j.Status != StatusSucceeded && j.LastError != "" {
		return r, fmt.Errorf("%w: job %s ended %s: %s", ErrInvalidState, j.ID, j.Status, j.LastError)
	}
	return t.Result(c, j)
}
