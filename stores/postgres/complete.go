package postgres

import (
	"bytes"
	"context"
	"fmt"
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
		if err := s.writeCompletions(ctx, true, cs, hinted, out); err != nil {
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
		if err := s.writeCompletions(ctx, false, cs, plain, out); err != nil {
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
// once, in job id order), by their row hints' tuple ids when byTID, else
// by their job ids, and sets out[i] for those that applied. A batch by
// tuple id of successes only, the usual batch, takes completeSucceeded:
// four arrays fewer to send and no outcome to test per row.
func (s *Store) writeCompletions(ctx context.Context, byTID bool, cs []spi.Completion, idx []int, out []bool) error {
	n := len(idx)
	succeeded := byTID && !slices.ContainsFunc(idx, func(i int) bool { return cs[i].Outcome != spi.OutcomeSucceeded })
	var (
		ids        = make([]pgtype.UUID, 0, n)
		seqs       = make([]int64, 0, n)
		finished   = make([]pgtype.Timestamptz, 0, n)
		results    = make([][]byte, 0, n)
		resultType = make([]pgtype.Text, 0, n)
		tids       []pgtype.TID
		statuses   []string
		retryAt    []pgtype.Timestamptz
		attempts   []int32
		lastErr    []pgtype.Text
	)
	if byTID {
		tids = make([]pgtype.TID, 0, n)
	}
	if !succeeded {
		statuses, retryAt = make([]string, 0, n), make([]pgtype.Timestamptz, 0, n)
		attempts, lastErr = make([]int32, 0, n), make([]pgtype.Text, 0, n)
	}
	for _, i := range idx {
		c := cs[i]
		ids = append(ids, pgUUID(c.JobID))
		seqs = append(seqs, c.ClaimSeq)
		finished = append(finished, nullTime(c.FinishedAt))
		if byTID {
			tids = append(tids, hintTID(c.RowHint))
		}
		if c.Outcome == spi.OutcomeSucceeded {
			results = append(results, c.Result)
			resultType = append(resultType, nullText(c.ResultType))
		} else {
			results = append(results, nil)
			resultType = append(resultType, pgtype.Text{})
		}
		if succeeded {
			continue
		}
		switch c.Outcome {
		case spi.OutcomeSucceeded:
			statuses = append(statuses, string(spi.StatusSucceeded))
			retryAt = append(retryAt, pgtype.Timestamptz{})
			attempts = append(attempts, 0)
			lastErr = append(lastErr, pgtype.Text{})
		case spi.OutcomeRetry:
			statuses = append(statuses, string(spi.StatusPending))
			retryAt = append(retryAt, pgtype.Timestamptz{Time: c.RetryAt, Valid: true})
			attempts = append(attempts, int32(c.Attempts))
			lastErr = append(lastErr, nullText(c.LastError))
		case spi.OutcomeFailed:
			statuses = append(statuses, string(spi.StatusFailed))
			retryAt = append(retryAt, pgtype.Timestamptz{})
			attempts = append(attempts, int32(c.Attempts))
			lastErr = append(lastErr, nullText(c.LastError))
		}
	}
	// As flat arrays, pgx encodes the slices of its own types without
	// reflection.
	var stmt string
	var args []any
	switch {
	case succeeded:
		stmt = s.sql.completeSucceeded
		args = []any{pgtype.FlatArray[pgtype.UUID](ids), seqs, pgtype.FlatArray[pgtype.Timestamptz](finished),
			pgtype.FlatArray[[]byte](results), pgtype.FlatArray[pgtype.Text](resultType), pgtype.FlatArray[pgtype.TID](tids)}
	default:
		stmt = s.sql.complete
		args = []any{pgtype.FlatArray[pgtype.UUID](ids), seqs, statuses, pgtype.FlatArray[pgtype.Timestamptz](finished),
			pgtype.FlatArray[pgtype.Timestamptz](retryAt), attempts, pgtype.FlatArray[pgtype.Text](lastErr),
			pgtype.FlatArray[[]byte](results), pgtype.FlatArray[pgtype.Text](resultType)}
		if byTID {
			stmt = s.sql.completeTID
			args = append(args, pgtype.FlatArray[pgtype.TID](tids))
		}
	}
	rows, err := s.pool.Query(ctx, stmt, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if byTID {
		// The statements by tuple id return the position of each
		// completion that applied in the arrays, from 1.
		var k int64
		for rows.Next() {
			if err := rows.Scan(&k); err != nil {
				return err
			}
			if k < 1 || k > int64(n) {
				return fmt.Errorf("completion %d of a batch of %d applied", k, n)
			}
			out[idx[k-1]] = true
		}
		return rows.Err()
	}
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
