package ratchet

import (
	"context"
	"fmt"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Waiting says why a job that has not finished is not running: a Kind to
// filter on and a sentence for people. JobDetail gives it, and the CLI's
// `jobs show` and the dashboard's job page show it.
type Waiting struct {
	Kind WaitKind `json:"kind"`
	// Detail says it for people: the task paused and since when, the
	// time the job is due, the dependencies or the signal it waits for.
	Detail string `json:"detail"`
	// Since is when the wait began, where it is known (the pause); zero
	// otherwise.
	Since time.Time `json:"since,omitzero"`
}

// WaitKind names why a job waits.
type WaitKind string

// The reasons a job that has not finished is not running.
const (
	// WaitingPaused: PENDING, and its task is paused (Client.PauseTask).
	WaitingPaused WaitKind = "paused"
	// WaitingScheduled: PENDING, and not due yet.
	WaitingScheduled WaitKind = "scheduled"
	// WaitingReady: PENDING and due; it waits for a node to claim it (a
	// node that runs its task, has a free slot and, for a job of a
	// resource, a free permit).
	WaitingReady WaitKind = "ready"
	// WaitingRateLimited: PENDING and due, and its rate limit's window is
	// full (WithRateLimit).
	WaitingRateLimited WaitKind = "rate-limited"
	// WaitingDependencies: BLOCKED until its parents in a workflow finish.
	WaitingDependencies WaitKind = "dependencies"
	// WaitingSequence: BLOCKED until the job before it in its sequence
	// finishes (WithSequenceKey), or, held, until that failed job is
	// retried.
	WaitingSequence WaitKind = "sequence"
	// WaitingFairTurn: BLOCKED until the job before it of its fairness
	// key is claimed (WithFairnessKey): its key's place in the line is
	// taken.
	WaitingFairTurn WaitKind = "fair-turn"
	// WaitingSignal: WAITING for a signal.
	WaitingSignal WaitKind = "signal"
)

// waitingOf says why j waits, at now; nil when it runs or has finished.
// paused is the time j's task was paused (zero: not paused).
func waitingOf(j *Job, now, paused time.Time, rate *spi.RateWindow) *Waiting {
	switch j.Status {
	case StatusPending:
		switch {
		case !paused.IsZero():
			return &Waiting{Kind: WaitingPaused, Since: paused, Detail: fmt.Sprintf("task %s is paused (since %s): no node claims its jobs until it is resumed", j.TaskName, paused.Format(time.RFC3339))}
		case j.ScheduledAt.After(now):
			return &Waiting{Kind: WaitingScheduled, Detail: fmt.Sprintf("due in %s (at %s)", j.ScheduledAt.Sub(now).Round(time.Second), j.ScheduledAt.Format(time.RFC3339))}
		case rate != nil && rate.Starts >= int64(j.ResourceLimit):
			return &Waiting{Kind: WaitingRateLimited, Detail: fmt.Sprintf("rate limit %q: %d of at most %d starts in the last %s; it starts once the window has room", rate.Key, rate.Starts, j.ResourceLimit, rate.Period)}
		case rate != nil:
			return &Waiting{Kind: WaitingReady, Detail: fmt.Sprintf("due; waits for a node of task %s with a free slot (rate limit %q: %d of at most %d starts in the last %s)", j.TaskName, rate.Key, rate.Starts, j.ResourceLimit, rate.Period)}
		case j.Resource != "":
			return &Waiting{Kind: WaitingReady, Detail: fmt.Sprintf("due; waits for a node of task %s with a free slot and a free permit of %s (at most %d running)", j.TaskName, j.Resource, j.ResourceLimit)}
		}
		return &Waiting{Kind: WaitingReady, Detail: fmt.Sprintf("due; waits for a node of task %s with a free slot", j.TaskName)}
	case StatusBlocked:
		return &Waiting{Kind: WaitingDependencies, Detail: fmt.Sprintf("%d of its %d dependencies have not finished", j.Waiting, j.DependencyCount)}
	case spi.StatusWaiting:
		d := "a signal"
		if w := j.Signal; w != nil {
			d = fmt.Sprintf("signal %q", w.Name)
			if w.Key != "" {
				d += fmt.Sprintf(" with key %q", w.Key)
			}
			if !w.Deadline.IsZero() {
				d += ", until " + w.Deadline.Format(time.RFC3339)
			}
		}
		return &Waiting{Kind: WaitingSignal, Detail: "waits for " + d}
	}
	return nil
}

// waiting says why j waits (JobDetail): it reads whether j's task is
// paused when the store pauses tasks.
func (c *Client) waiting(ctx context.Context, j *Job) (*Waiting, error) {
	var paused time.Time
	if p := spi.CapabilitiesOf(c.store).Pauser; p != nil && j.Status == StatusPending {
		tasks, err := p.PausedTasks(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range tasks {
			if t.Task == j.TaskName {
				paused = t.Since
			}
		}
	}
	var rate *spi.RateWindow
	if rs := spi.CapabilitiesOf(c.store).Rates; rs != nil && j.Status == StatusPending && spi.IsRateResource(j.Resource) {
		ws, err := rs.RateStarts(ctx, []string{j.Resource})
		if err != nil {
			return nil, err
		}
		if len(ws) == 1 {
			rate = &ws[0]
		}
	}
	if w := spi.CapabilitiesOf(c.store).Workflows; w != nil && j.Status == StatusBlocked {
		ds, err := w.Dependencies(ctx, j.ID)
		if err != nil {
			return nil, err
		}
		if wt := sequenceWaiting(ds); wt != nil {
			return wt, nil
		}
	}
	return waitingOf(j, c.now(), paused, rate), nil
}

// sequenceWaiting says why a BLOCKED job with dependencies ds waits on its
// sequence's link; nil when it has none that has not finished.
func sequenceWaiting(ds []spi.Dependency) *Waiting {
	for _, d := range ds {
		if d.Allow&spi.AllowSequence == 0 || d.ParentStatus != "" {
			continue
		}
		if d.Allow&spi.AllowTurn != 0 {
			return &Waiting{Kind: WaitingFairTurn, Detail: fmt.Sprintf("waits for its fair turn: job %s, the one before it of its fairness key, holds the key's place in the line until a node claims it", d.ParentID)}
		}
		detail := fmt.Sprintf("waits for job %s, the one before it in its sequence, to finish", d.ParentID)
		if d.Allow&spi.HoldOnFailure != 0 {
			detail += " (a failure of it holds the sequence until it is retried; cancel this job to take it out of the sequence)"
		}
		return &Waiting{Kind: WaitingSequence, Detail: detail}
	}
	return nil
}
