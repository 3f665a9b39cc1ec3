package postgres

import (
	"bytes"
	"context"
	"slices"
	"strconv"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// CompleteJobs applies a batch of fenced owner writes with one statement:
// the completions whose claims left a row hint (spi.Job.RowHint, the tuple
// id the claim wrote) by those tuple ids, the others by job id; a hint
// found stale sends its completion to a second statement, by job id.
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
	pos := sqlcore.FirstOfEach(sqlcore.Refs(cs)) // index in cs of each completion to write
	// Those whose claim left a row hint go by tuple id; the others, and
	// those whose hint was stale, by job id.
	var hinted, plain []int
	for _, i := range pos {
		if cs[i].RowHint != 0 {
			hinted = append(hinted, i)
		} else {
			plain = append(plain, i)
		}
	}
	if len(hinted) > 0 {
		if err := s.writeCompletions(ctx, s.sql.completeTID, cs, hinted, out); err != nil {
			return nil, fail("complete jobs", err)
		}
		for _, i := range hinted {
			if !out[i] {
				plain = append(plain, i)
			}
		}
		if len(plain) > 0 && len(plain) < len(pos) {
			// Back in job id order (see FirstOfEach), as pos was.
			slices.SortFunc(plain, func(a, b int) int { return bytes.Compare(cs[a].JobID[:], cs[b].JobID[:]) })
		}
	}
	if len(plain) > 0 {
		if err := s.writeCompletions(ctx, s.sql.complete, cs, plain, out); err != nil {
			return nil, fail("complete jobs", err)
		}
	}
	// A completion found already applied (an earlier call whose commit
	// reached the server but whose answer was lost) counts.
	if err := sqlcore.Recognize(cs, pos, out, func(ids []uuid.UUID) ([]*spi.Job, error) { return s.dialect.LoadJobs(ctx, s.db, ids) }); err != nil {
		return nil, fail("complete jobs", err)
	}
	return out, nil
}

// writeCompletions writes the completions cs[i] for i in idx (each claim
// once, in job id order) with stmt, complete or completeTID, and sets
// out[i] for those that applied.
func (s *Store) writeCompletions(ctx context.Context, stmt string, cs []spi.Completion, idx []int, out []bool) error {
	n := len(idx)
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
		tids       []pgtype.TID
	)
	if stmt == s.sql.completeTID {
		tids = make([]pgtype.TID, 0, n)
	}
	for _, i := range idx {
		c := cs[i]
		ids = append(ids, pgUUID(c.JobID))
		seqs = append(seqs, c.ClaimSeq)
		finished = append(finished, nullTime(c.FinishedAt))
		if tids != nil {
			tids = append(tids, hintTID(c.RowHint))
		}
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
	// As flat arrays, pgx encodes the slices of its own types without
	// reflection.
	args := []any{pgtype.FlatArray[pgtype.UUID](ids), seqs, statuses, pgtype.FlatArray[pgtype.Timestamptz](finished),
		pgtype.FlatArray[pgtype.Timestamptz](retryAt), attempts, pgtype.FlatArray[pgtype.Text](lastErr),
		pgtype.FlatArray[[]byte](results), pgtype.FlatArray[pgtype.Text](resultType)}
	if tids != nil {
		args = append(args, pgtype.FlatArray[pgtype.TID](tids))
	}
	rows, err := s.pool.Query(ctx, stmt, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	at := make(map[pgtype.UUID]int, n) // index in cs of each id
	for k, id := range ids {
		at[id] = idx[k]
	}
	var id pgtype.UUID
	for rows.Next() {
		if err := rows.Scan(&id); err != nil {
			return err
		}
		out[at[id]] = true
	}
	return rows.Err()
}

// wake publishes a wakeup for priority p, from the source of ctx, after a
// write that made jobs due (a release, a DLQ retry, a recovery). Wakeups
// are hints: a failure is ignored, the pollers find the jobs anyway.
func (s *Store) wake(ctx context.Context, p int32) {
	_, _ = s.pool.Exec(ctx, s.sql.notify, s.channel, strconv.Itoa(int(min(max(p, 0), 4)))+sourceSuffix(ctx))
}
