package nodecore

import (
	"context"
	"fmt"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Expired is the failure of a claimed job that may no longer start: its
// start-by deadline (spi.StartBy) is before now, on the node's clock. It
// is final (not retried) and wraps ratchet.ErrExpired; nil when the job
// may run. The node writes it in place of running the body, for every
// claim, a retry's or a crash redelivery's as the first.
func Expired(j *spi.Job, now time.Time) error {
	if bug("start-by-ignored") {
		return nil
	}
	return expired(j, now, "claimed")
}

// expired is the failure of job j, found past its start-by deadline at
// now by what (a claim, the sweeper); nil when it may still start.
func expired(j *spi.Job, now time.Time, what string) error {
	by, ok := spi.StartBy(j)
	if !ok || !now.After(by) {
		return nil
	}
	return ratchet.DoNotRetry(fmt.Errorf("%w: not started by %s (%s at %s)", ratchet.ErrExpired,
		by.UTC().Format(time.RFC3339Nano), what, now.UTC().Format(time.RFC3339Nano)))
}

// StartBySweep is the start-by sweeper's pass: it fails the PENDING jobs
// that no node claimed by their start-by deadline (spi.StartBySweeper),
// with the failure a claim past the deadline writes (Expired), so that a
// job of a paused task, of a task no node runs, or behind a backlog ends
// at its deadline rather than at its next claim. The store reads the
// candidates by the deadline of their first run (spi.StartByProperty);
// the pass decides on each job's own deadline, which a retry of a job
// with a start-within window moves later. Each call reads one page, from
// where the last full one ended.
type StartBySweep struct {
	Store spi.StartBySweeper
	// Limit is the most jobs one call reads.
	Limit int
	// Sanitizer writes the failure's error (nil: as it is).
	Sanitizer spi.ErrorSanitizer
	// Failed, when not nil, is told of each job it failed (metrics,
	// events, logs), with the error written.
	Failed func(j *spi.Job, lastError string, now time.Time)

	cursor spi.StartByCursor
}

// Pass fails the jobs of one page at now; more reports a full page (the
// next call reads on from it).
func (p *StartBySweep) Pass(ctx context.Context, now time.Time) (more bool, err error) {
	at := now
	if bug("start-by-sweep-early") { // planted: jobs swept 2 s before their deadline
		at = now.Add(2 * time.Second)
	}
	jobs, next, err := p.Store.UnstartedJobs(ctx, at, p.cursor, p.Limit)
	if err != nil {
		return false, err
	}
	var es []spi.Expiry
	var failed []*spi.Job
	for _, j := range jobs {
		e := expired(j, at, "found unstarted")
		if e == nil || j.Status != spi.StatusPending {
			continue
		}
		msg := e.Error()
		if p.Sanitizer != nil {
			msg = p.Sanitizer.Sanitize(e)
		}
		es = append(es, spi.Expiry{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, LastError: msg})
		failed = append(failed, j)
	}
	if len(es) > 0 {
		applied, err := p.Store.ExpireJobs(ctx, es, now)
		if err != nil {
			return false, err
		}
		for i, ok := range applied {
			if ok && p.Failed != nil && i < len(failed) {
				p.Failed(failed[i], es[i].LastError, now)
			}
		}
	}
	p.cursor = next
	return next != (spi.StartByCursor{}), nil
}
