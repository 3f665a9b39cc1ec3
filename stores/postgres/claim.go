package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// ClaimJobs moves up to p.Limit due PENDING jobs to RUNNING for p.NodeID
// and returns them in claim order: effective priority descending, scheduled
// time ascending, id ascending. Only jobs passing p.Tags are considered, and
// jobs whose resource has no free permit are skipped.
//
// The claim is one statement: it locks, with FOR NO KEY UPDATE SKIP LOCKED,
// the first p.Limit due jobs of each priority level from the claim index
// (aging is monotone inside a level, so the best p.Limit overall are among
// them), passing over jobs that fail the tag filter and jobs of full
// resources inside those index scans, ranks the candidates by effective
// priority and updates the best p.Limit, returning them. Concurrent
// claimers skip each other's rows instead of waiting. (FOR NO KEY UPDATE is
// the lock the UPDATE takes anyway; FOR UPDATE would make the UPDATE of a
// row this statement locked create a MultiXact, and halve the claim rate.)
// When one of the best p.Limit names a resource, the statement claims
// nothing, and the claim runs again as the core's (sqlcore.Core.ClaimJobs):
// a transaction whose Holders take a transaction-scoped advisory lock per
// resource (hashtextextended of schema/resource, in key order), count each
// one's RUNNING holders and admit the candidates while a permit is free.
//
// A claimed row that cannot be read back as a job is failed into the
// dead-letter queue with the problem as its last error and left out of the
// result.
func (s *Store) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	got, permits, err := s.claim(ctx, p)
	if permits {
		got, err = s.core.ClaimJobs(ctx, p)
	}
	if len(got) > 0 {
		s.maybeVacuum(len(got))
	}
	return got, err
}

// ConcurrentClaims reports that concurrent claims pay off: each runs on a
// pooled connection of its own, and their candidate scans skip each
// other's rows (SKIP LOCKED). It implements [spi.ConcurrentClaimer].
func (s *Store) ConcurrentClaims() bool { return true }

// claim is the one-statement claim; permits reports that it claimed
// nothing because the best candidates name resources.
func (s *Store) claim(ctx context.Context, p spi.ClaimParams) (_ []*spi.Job, permits bool, _ error) {
	done, err := s.enter()
	if err != nil {
		return nil, false, err
	}
	defer done()
	if p.Limit <= 0 {
		return nil, false, nil
	}
	tasks, err := sqlcore.ClaimTasks(p, func() ([]string, error) {
		rows, err := s.pool.Query(ctx, s.sql.pendingTasks)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowTo[string])
	})
	if err != nil {
		return nil, false, fail("claim jobs", err)
	}
	if len(tasks) == 0 {
		return nil, false, nil
	}
	now := p.Now.Truncate(time.Microsecond)
	boost := max(int64(p.BoostInterval), 0)
	tf := compileTags(p.Tags)
	pre := []statement{{sql: pinnedPlan}}
	if len(tasks) >= 2 && len(tasks) <= maxStrictTasks {
		pre = append(pre, statement{sql: strictLock, args: []any{strictLockKey(s.schema, tasks)}})
	}
	rows, finish, err := s.queryAfter(ctx, pre, s.sql.claim(claimKey{shape: tf.shape, tasks: len(tasks)}),
		tf.args(tasks, now, int64(p.Limit), boost, nullText(p.NodeID))...)
	if err != nil {
		return nil, false, fail("claim jobs", err)
	}
	got, bad, permits, err := s.scanClaimed(rows, p.Limit)
	// The claim happened only if its round trip ended without an error.
	if ferr := finish(); err == nil {
		err = ferr
	}
	if err != nil {
		return nil, false, fail("claim jobs", err)
	}
	if permits {
		return nil, true, nil
	}
	if len(bad) > 0 {
		// The good jobs are claimed already and must reach the caller: if
		// failing the bad rows fails too, they stay RUNNING under this
		// node, and orphan recovery brings them back to a later claim.
		_ = s.dialect.FailCorrupt(ctx, s.db, now, bad)
	}
	// The fair turns of the claimed jobs pass in a write of their own. The
	// jobs are claimed already and must reach the caller: if it fails,
	// each turn passes at its job's finish instead, as any link does.
	_ = s.core.PassTurns(ctx, got, now)
	// The statements return the rows in no particular order: sort them as
	// they were picked.
	sqlcore.SortClaimed(got, now, p.BoostInterval)
	return got, false, nil
}

// scanClaimed reads the rows of a claim: the claimed jobs, the rows that
// could not be decoded, and whether the claim statement found that it
// needs permits (its row of NULLs). It closes rows.
func (s *Store) scanClaimed(rows pgx.Rows, limit int) (got []*spi.Job, bad []sqlcore.BadRow[pgtype.UUID], permits bool, err error) {
	defer rows.Close()
	got = make([]*spi.Job, 0, limit)
	rr := s.newRowReader()
	for rows.Next() {
		if rows.RawValues()[0] == nil { // job_id is never NULL but in that row
			permits = true
			continue
		}
		j, raw, seq, err := rr.read(rows)
		if err != nil {
			bad = append(bad, sqlcore.BadRow[pgtype.UUID]{ID: raw, Seq: seq, Err: err})
			continue
		}
		got = append(got, j)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, false, err
	}
	return got, bad, permits, nil
}

// tagFilter is a spi.TagFilter in the form the claim statements take.
type tagFilter struct {
	shape int
	lists [][]string // the lists of the shape, in the order All, Any, None
}

func compileTags(f spi.TagFilter) tagFilter {
	var tf tagFilter
	if len(f.All) > 0 {
		// The statement compares a count of matching tags with the
		// list's length: repeats must go.
		tf.shape |= tagAll
		tf.lists = append(tf.lists, sqlcore.UniqueTags(f.All))
	}
	if len(f.Any) > 0 {
		tf.shape |= tagAny
		tf.lists = append(tf.lists, f.Any)
	}
	if len(f.None) > 0 {
		tf.shape |= tagNone
		tf.lists = append(tf.lists, f.None)
	}
	return tf
}

// args returns first, the tasks one by one and the filter's lists: the
// parameters of a claim statement of the filter's shape.
func (tf tagFilter) args(tasks []string, first ...any) []any {
	args := make([]any, 0, len(first)+len(tasks)+len(tf.lists))
	args = append(args, first...)
	for _, t := range tasks {
		args = append(args, t)
	}
	for _, l := range tf.lists {
		args = append(args, l)
	}
	return args
}

// strictLock serializes the claims of one task list that can take the
// strict order (2 to maxStrictTasks tasks, see strictCandidates), across
// every node: a transaction-scoped advisory lock, taken in the claim's
// round trip by a statement of its own before the claim, so that the
// claim's snapshot is taken once the claim before it has committed. The
// strict claim reads its candidates unlocked, the best $2 * strictDepth in
// the strict order, and then locks the best of them that are still
// PENDING: claims running at once read the same candidates, and all but
// the first found them taken (each such row costs a recheck of its newer
// version). In a mixed burn-down of ten tasks at five levels, 36 of the
// 45 claims that took over 40 ms returned no job, each after 40 to 94 ms
// of such rechecks; one at a time, each finds the best jobs still free.
const strictLock = `SELECT pg_advisory_xact_lock($1)`

// strictLockKey is the advisory lock key of strictLock for the claims of
// tasks (a task set: sorted, without duplicates) in schema.
func strictLockKey(schema string, tasks []string) int64 {
	return advisoryKey(append([]string{"ratchet-claim", schema}, tasks...)...)
}
