package postgres

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// ClaimJobs moves up to p.Limit due PENDING jobs to RUNNING for p.NodeID
// with one statement and returns them in claim order: effective priority
// descending, scheduled time ascending, id ascending. The statement locks,
// with FOR NO KEY UPDATE SKIP LOCKED, the first p.Limit due jobs of each
// priority level from the claim index (aging is monotone inside a level, so
// the best p.Limit overall are among them), ranks those by effective
// priority and updates the best p.Limit, returning them. Concurrent claimers
// skip each other's rows instead of waiting. (FOR NO KEY UPDATE is the lock
// the UPDATE takes anyway; FOR UPDATE would make the UPDATE of a row this
// statement locked create a MultiXact, and halve the claim rate.)
//
// A claimed row that cannot be read back as a job is failed into the
// dead-letter queue with the problem as its last error and left out of the
// result.
func (s *Store) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if p.Limit <= 0 {
		return nil, nil
	}
	now := p.Now.Truncate(time.Microsecond)
	boost := max(int64(p.BoostInterval), 0)
	rows, err := s.pool.Query(ctx, s.sql.claim, now, int64(p.Limit), boost, nullText(p.NodeID))
	if err != nil {
		return nil, fail("claim jobs", err)
	}
	defer rows.Close()
	got := make([]*spi.Job, 0, p.Limit)
	var bad []badRow
	var r rowScan
	for rows.Next() {
		if err := r.scan(rows); err != nil {
			bad = append(bad, badRow{r.id, r.claimSeq, err})
			continue
		}
		j, err := r.job()
		if err != nil {
			bad = append(bad, badRow{r.id, r.claimSeq, err})
			continue
		}
		got = append(got, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fail("claim jobs", err)
	}
	if len(bad) > 0 {
		// The good jobs are claimed already and must reach the caller: if
		// failing the bad rows fails too, they stay RUNNING under this
		// node, and orphan recovery brings them back to a later claim.
		_ = s.failCorrupt(ctx, bad, now)
	}
	// The statement returns the rows in no particular order: sort them as
	// it picked them.
	slices.SortFunc(got, func(a, b *spi.Job) int {
		ea := spi.EffectivePriority(a.Priority, a.ScheduledAt, now, p.BoostInterval)
		eb := spi.EffectivePriority(b.Priority, b.ScheduledAt, now, p.BoostInterval)
		if c := cmp.Compare(eb, ea); c != 0 {
			return c
		}
		if c := a.ScheduledAt.Compare(b.ScheduledAt); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
	return got, nil
}

// badRow is a claimed row that could not be decoded.
type badRow struct {
	id  pgtype.UUID
	seq int64
	err error
}

// failCorrupt moves undecodable claimed rows to FAILED so they cannot block
// the queue; GetJob and ListJobs keep reporting them as corrupt. The write
// is fenced by the claim that just took them.
func (s *Store) failCorrupt(ctx context.Context, bad []badRow, now time.Time) error {
	ids := make([]pgtype.UUID, 0, len(bad))
	seqs := make([]int64, 0, len(bad))
	msgs := make([]string, 0, len(bad))
	for _, b := range bad {
		if !b.id.Valid {
			continue
		}
		ids = append(ids, b.id)
		seqs = append(seqs, b.seq)
		msgs = append(msgs, b.err.Error())
	}
	if _, err := s.pool.Exec(ctx, s.sql.failCorrupt, ids, now, seqs, msgs); err != nil {
		return fmt.Errorf("fail corrupt rows: %w", err)
	}
	return nil
}

// claimKey is one fenced write's target.
type claimKey struct {
	id  [16]byte
	seq int64
}

// CompleteJobs applies a batch of fenced owner writes with one statement.
// Each applies only while its job is RUNNING with the named claim sequence;
// the result has one entry per completion, true when it applied. When one
// claim appears more than once in the batch, only its first completion can
// apply, as if they ran one after the other. SUCCEEDED sets the finish time,
// result and result type; RETRY puts the job back to PENDING at RetryAt with
// the new attempt count and last error and the owner cleared; FAILED sets
// the attempt count, last error and finish time. The claim sequence does not
// change. An unknown outcome fails the whole batch before anything is
// written.
func (s *Store) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	for _, c := range cs {
		switch c.Outcome {
		case spi.OutcomeSucceeded, spi.OutcomeRetry, spi.OutcomeFailed:
		default:
			return nil, fmt.Errorf("postgres: complete jobs: job %s: unknown outcome %d", c.JobID, c.Outcome)
		}
	}
	out := make([]bool, len(cs))
	if len(cs) == 0 {
		return out, nil
	}
	// Each claim once (its first completion), in job id order: concurrent
	// batch writers (completers, recovery) then lock rows in one order and
	// cannot deadlock.
	pos := make([]int, 0, len(cs)) // index in cs of each array element
	seen := make(map[claimKey]bool, len(cs))
	for i, c := range cs {
		k := claimKey{c.JobID, c.ClaimSeq}
		if !seen[k] {
			seen[k] = true
			pos = append(pos, i)
		}
	}
	slices.SortStableFunc(pos, func(a, b int) int { return bytes.Compare(cs[a].JobID[:], cs[b].JobID[:]) })
	n := len(pos)
	var (
		ids        = make([]pgtype.UUID, 0, n)
		seqs       = make([]int64, 0, n)
		statuses   = make([]string, 0, n)
		finished   = make([]pgtype.Timestamptz, 0, n)
		retryAt    = make([]pgtype.Timestamptz, 0, n)
		attempts   = make([]int32, 0, n)
		lastErr    = make([]pgtype.Text, 0, n)
		results    = make([][]byte, 0, n)
		resultType = make([]pgtype.Text, 0, n)
	)
	for _, i := range pos {
		c := cs[i]
		ids = append(ids, pgUUID(c.JobID))
		seqs = append(seqs, c.ClaimSeq)
		finished = append(finished, nullTime(c.FinishedAt))
		switch c.Outcome {
		case spi.OutcomeSucceeded:
			statuses = append(statuses, string(spi.StatusSucceeded))
			retryAt = append(retryAt, pgtype.Timestamptz{})
			attempts = append(attempts, 0)
			lastErr = append(lastErr, pgtype.Text{})
			results = append(results, c.Result)
			resultType = append(resultType, nullText(c.ResultType))
		case spi.OutcomeRetry:
			statuses = append(statuses, string(spi.StatusPending))
			retryAt = append(retryAt, pgtype.Timestamptz{Time: c.RetryAt, Valid: true})
			attempts = append(attempts, int32(c.Attempts))
			lastErr = append(lastErr, nullText(c.LastError))
			results = append(results, nil)
			resultType = append(resultType, pgtype.Text{})
		case spi.OutcomeFailed:
			statuses = append(statuses, string(spi.StatusFailed))
			retryAt = append(retryAt, pgtype.Timestamptz{})
			attempts = append(attempts, int32(c.Attempts))
			lastErr = append(lastErr, nullText(c.LastError))
			results = append(results, nil)
			resultType = append(resultType, pgtype.Text{})
		}
	}
	rows, err := s.pool.Query(ctx, s.sql.complete, ids, seqs, statuses, finished, retryAt, attempts, lastErr, results, resultType)
	if err != nil {
		return nil, fail("complete jobs", err)
	}
	defer rows.Close()
	var idx int64
	for rows.Next() {
		if err := rows.Scan(&idx); err != nil {
			return nil, fail("complete jobs", err)
		}
		out[pos[idx-1]] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fail("complete jobs", err)
	}
	return out, nil
}

// ReleaseJobs puts claimed jobs back to PENDING, due at now, with the owner
// cleared and the claim sequence advanced, without charging attempts or the
// crash budget; one fenced statement per batch, and a wakeup when some job
// was released, so that other nodes take the work at once.
func (s *Store) ReleaseJobs(ctx context.Context, refs []spi.ClaimRef, now time.Time) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]bool, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	pos := make([]int, 0, len(refs)) // index in refs of each array element
	seen := make(map[claimKey]bool, len(refs))
	for i, r := range refs {
		k := claimKey{r.JobID, r.ClaimSeq}
		if !seen[k] {
			seen[k] = true
			pos = append(pos, i)
		}
	}
	slices.SortStableFunc(pos, func(a, b int) int { return bytes.Compare(refs[a].JobID[:], refs[b].JobID[:]) })
	ids := make([]pgtype.UUID, len(pos))
	seqs := make([]int64, len(pos))
	for k, i := range pos {
		ids[k] = pgUUID(refs[i].JobID)
		seqs[k] = refs[i].ClaimSeq
	}
	rows, err := s.pool.Query(ctx, s.sql.release, ids, seqs, now)
	if err != nil {
		return nil, fail("release jobs", err)
	}
	defer rows.Close()
	var idx int64
	var prio int32
	top := int32(-1)
	for rows.Next() {
		if err := rows.Scan(&idx, &prio); err != nil {
			return nil, fail("release jobs", err)
		}
		out[pos[idx-1]] = true
		top = max(top, prio)
	}
	if err := rows.Err(); err != nil {
		return nil, fail("release jobs", err)
	}
	if top >= 0 {
		s.wake(ctx, top)
	}
	return out, nil
}

// wake publishes a wakeup for priority p after a write that made jobs due
// (a release, a DLQ retry, a recovery). Wakeups are hints: a failure is
// ignored, the pollers find the jobs anyway.
func (s *Store) wake(ctx context.Context, p int32) {
	_, _ = s.pool.Exec(ctx, s.sql.notify, s.channel, strconv.Itoa(int(min(max(p, 0), 4))))
}
