package postgres

import (
	"context"
	"slices"
	"strconv"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

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
	if err := sqlcore.ValidOutcomes(cs); err != nil {
		return nil, fail("complete jobs", err)
	}
	if slices.ContainsFunc(cs, sqlcore.FlowCompletion) {
		// A workflow's completion releases its dependents in the same
		// transaction: the core's path.
		return s.core.CompleteJobs(ctx, cs)
	}
	out := make([]bool, len(cs))
	if len(cs) == 0 {
		return out, nil
	}
	// Each claim once (its first completion), in job id order: concurrent
	// batch writers (completers, recovery) then lock rows in one order and
	// cannot deadlock.
	pos := sqlcore.FirstOfEach(sqlcore.Refs(cs)) // index in cs of each array element
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
	at := make(map[pgtype.UUID]int, n) // index in cs of each id
	for k, id := range ids {
		at[id] = pos[k]
	}
	var id pgtype.UUID
	for rows.Next() {
		if err := rows.Scan(&id); err != nil {
			return nil, fail("complete jobs", err)
		}
		out[at[id]] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fail("complete jobs", err)
	}
	rows.Close()
	// A completion found already applied (an earlier call whose commit
	// reached the server but whose answer was lost) counts.
	if err := sqlcore.Recognize(cs, pos, out, func(ids []uuid.UUID) ([]*spi.Job, error) { return s.dialect.LoadJobs(ctx, s.db, ids) }); err != nil {
		return nil, fail("complete jobs", err)
	}
	return out, nil
}

// wake publishes a wakeup for priority p, from the source of ctx, after a
// write that made jobs due (a release, a DLQ retry, a recovery). Wakeups
// are hints: a failure is ignored, the pollers find the jobs anyway.
func (s *Store) wake(ctx context.Context, p int32) {
	_, _ = s.pool.Exec(ctx, s.sql.notify, s.channel, strconv.Itoa(int(min(max(p, 0), 4)))+sourceSuffix(ctx))
}
