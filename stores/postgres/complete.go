package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// CompleteJobs applies a batch of fenced owner writes with one statement
// (complete, or completeSucceeded for a batch of successes alone), joined
// with the table by job id and planned for the batch (customPlan). Each
// applies only while its job is RUNNING with the named claim sequence;
// the result has one entry per completion, true when it applied. When one
// claim appears more than once in the batch, only its first completion can
// apply, as if they ran one after the other. SUCCEEDED sets the finish time,
// result and result type; RETRY puts the job back to PENDING at RetryAt with
// the new attempt count and last error and the owner cleared (a SNOOZED,
// rare, takes the core's path with its batch); FAILED sets
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
	if slices.ContainsFunc(cs, sqlcore.OneByOne) {
		// A workflow's completion releases its dependents in the same
		// transaction, and a snooze writes a column the batched
		// statements do not: the core's path.
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
	if err := s.writeCompletions(ctx, cs, pos, out); err != nil {
		return nil, fail("complete jobs", err)
	}
	// A completion found already applied (an earlier call whose commit
	// reached the server but whose answer was lost) counts.
	if err := sqlcore.Recognize(cs, pos, out, func(ids []uuid.UUID) ([]*spi.Job, error) { return s.dialect.LoadJobs(ctx, s.db, ids) }); err != nil {
		return nil, fail("complete jobs", err)
	}
	return out, nil
}

// recordArrays are the arrays of completeRecorded for the completions
// cs[i], i in idx: each one's attempt outcome (NULL for none), node and
// start; nil when none of them writes a record.
func recordArrays(cs []spi.Completion, idx []int) []any {
	var outcomes, nodes []pgtype.Text
	var starts []pgtype.Timestamptz
	for k, i := range idx {
		a, ok := cs[i].Record()
		if !ok {
			continue
		}
		if outcomes == nil {
			outcomes, nodes, starts = make([]pgtype.Text, len(idx)), make([]pgtype.Text, len(idx)), make([]pgtype.Timestamptz, len(idx))
		}
		outcomes[k], nodes[k], starts[k] = nullText(string(a.Outcome)), nullText(a.Node), nullTime(a.StartedAt)
	}
	if outcomes == nil {
		return nil
	}
	return []any{pgtype.FlatArray[pgtype.Text](outcomes), pgtype.FlatArray[pgtype.Text](nodes), pgtype.FlatArray[pgtype.Timestamptz](starts)}
}

// writeCompletions writes the completions cs[i] for i in idx (each claim
// once, in job id order) and sets out[i] for those that applied.
func (s *Store) writeCompletions(ctx context.Context, cs []spi.Completion, idx []int, out []bool) error {
	n := len(idx)
	succeeded := !slices.ContainsFunc(idx, func(i int) bool { return cs[i].Outcome != spi.OutcomeSucceeded })
	var (
		ids        = make([]pgtype.UUID, 0, n)
		seqs       = make([]int64, 0, n)
		finished   = make([]pgtype.Timestamptz, 0, n)
		results    = make([][]byte, 0, n)
		resultType = make([]pgtype.Text, 0, n)
		statuses   []string
		retryAt    []pgtype.Timestamptz
		attempts   []int32
		lastErr    []pgtype.Text
	)
	if !succeeded {
		statuses, retryAt = make([]string, 0, n), make([]pgtype.Timestamptz, 0, n)
		attempts, lastErr = make([]int32, 0, n), make([]pgtype.Text, 0, n)
	}
	for _, i := range idx {
		c := cs[i]
		ids = append(ids, pgUUID(c.JobID))
		seqs = append(seqs, c.ClaimSeq)
		finished = append(finished, nullTime(c.FinishedAt))
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
	stmt := s.sql.completeSucceeded
	args := []any{pgtype.FlatArray[pgtype.UUID](ids), seqs, pgtype.FlatArray[pgtype.Timestamptz](finished),
		pgtype.FlatArray[[]byte](results), pgtype.FlatArray[pgtype.Text](resultType)}
	if !succeeded {
		stmt = s.sql.complete
		args = []any{pgtype.FlatArray[pgtype.UUID](ids), seqs, statuses, pgtype.FlatArray[pgtype.Timestamptz](finished),
			pgtype.FlatArray[pgtype.Timestamptz](retryAt), attempts, pgtype.FlatArray[pgtype.Text](lastErr),
			pgtype.FlatArray[[]byte](results), pgtype.FlatArray[pgtype.Text](resultType)}
		if recs := recordArrays(cs, idx); recs != nil {
			stmt = s.sql.completeRecorded
			args = append(args, recs...)
		}
	}
	rows, finish, err := s.queryPinned(ctx, customPlan, stmt, args...)
	if err != nil {
		return err
	}
	// The statements return the position of each completion that applied
	// in the arrays, from 1. Nothing is marked unless the round trip,
	// its commit included, succeeded.
	var k int64
	var got []int
	for rows.Next() {
		if err := rows.Scan(&k); err != nil {
			_ = finish()
			return err
		}
		if k < 1 || k > int64(n) {
			_ = finish()
			return fmt.Errorf("completion %d of a batch of %d applied", k, n)
		}
		got = append(got, idx[k-1])
	}
	if err := finish(); err != nil {
		return err
	}
	for _, i := range got {
		out[i] = true
	}
	return nil
}

// wake publishes a wakeup for priority p, naming no source, after a write
// that made jobs due (a release, a DLQ retry, a recovery). Wakeups are
// hints: a failure is ignored, the pollers find the jobs anyway.
func (s *Store) wake(ctx context.Context, p int32) {
	_, _ = s.pool.Exec(ctx, s.sql.notify, s.channel, strconv.Itoa(int(min(max(p, 0), 4))))
}

// claimsChanged publishes, on the wakeup channel, that a cancel took
// claims of RUNNING jobs away (payload claimsPayload): the listening
// nodes check their claims at once. Best effort, as a wakeup: a node that
// misses it finds out at its next heartbeat.
func (s *Store) claimsChanged(ctx context.Context) {
	_, _ = s.pool.Exec(ctx, s.sql.notify, s.channel, claimsPayload)
}
