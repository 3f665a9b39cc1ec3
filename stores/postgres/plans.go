package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// pinnedPlan precedes the claim statement, whose plan must depend
// neither on the backlog's size nor on the table's statistics, in its
// round trip, and sets, for the implicit transaction of the two only (SET
// LOCAL), how PostgreSQL plans it:
//
//   - plan_cache_mode force_generic_plan: each connection plans the
//     statement once. Left to choose, PostgreSQL plans every claim anew
//     once the backlog is large: the generic plan's cost, estimated for an
//     unknown LIMIT and an unknown scheduled_time bound, grows with the
//     table (2,850,000 at 10,000,000 pending jobs) while a plan for LIMIT
//     200 costs 1,800, so it keeps making custom plans, and their planning
//     took 1 of a claim's 3.5 ms.
//   - jit off: a generic plan's cost can pass jit_above_cost, and compiling
//     the claim took 900 ms.
//   - enable_seqscan off: a plan made while the table was nearly empty
//     (the first claim of a new installation) read the claimed rows by a
//     sequential scan filtered by tuple id instead of a TID scan, and kept
//     doing so as the table grew, until an ANALYZE replaced it (1.5 ms of
//     a 2 ms claim at 10,000 rows). Every access of the claim has
//     an index or a tuple id to go by; the setting only makes the planner
//     take it whatever the statistics say.
//   - enable_bitmapscan off: the claim of several tasks merges, per level,
//     the ordered index scans of its tasks (a Merge Append under a LIMIT,
//     reading a row past what it takes from each); a bitmap scan reads
//     every due job of a task, and sorts them, to hand the merge its first.
//
// The plan is the same index and TID scans whatever the arguments (the
// statuses are literals, each level's scan is ordered by the claim
// index); the plan tests check the generic plans.
const pinnedPlan = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('jit', 'off', true), set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)"

// customPlan precedes the completions (complete, completeSucceeded) in
// their round trip: PostgreSQL plans each batch anew (force_custom_plan),
// for the number of entries in its arrays and the table's size on disk,
// without JIT. A generic plan is made once per connection and kept: its
// estimates are those of an array of unknown length against the table
// as the planner saw it then, and one made while the table was empty
// (analyzed with no rows) joined the batch by reading the whole primary
// key, a plan the connection then kept as the table grew. Planning each
// batch costs less than the join by tuple id, whose plan needed no
// pinning, cost in system calls (see complete).
const customPlan = "SELECT set_config('plan_cache_mode', 'force_custom_plan', true), set_config('jit', 'off', true)"

// queryPinned runs q with args after the settings statement pin
// (pinnedPlan or customPlan), in one round trip, and returns its rows
// and finish, which the caller must call once done with the rows (it
// closes them): finish reads up to the end of the round trip, where the
// implicit transaction commits, and returns the error of the commit, if
// any, or of the rows.
func (s *Store) queryPinned(ctx context.Context, pin, q string, args ...any) (pgx.Rows, func() error, error) {
	return s.queryAfter(ctx, []statement{{sql: pin}}, q, args...)
}

// statement is a statement of a round trip that returns nothing the
// caller reads, and its arguments.
type statement struct {
	sql  string
	args []any
}

// queryAfter is queryPinned after the statements pre, in order, in the
// same round trip and implicit transaction: each statement of it takes
// its own snapshot, so q sees what committed while those before it
// waited (a lock).
func (s *Store) queryAfter(ctx context.Context, pre []statement, q string, args ...any) (pgx.Rows, func() error, error) {
	b := &pgx.Batch{}
	for _, st := range pre {
		b.Queue(st.sql, st.args...)
	}
	b.Queue(q, args...)
	br := s.pool.SendBatch(ctx, b)
	for range pre {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return nil, nil, err
		}
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, nil, err
	}
	finish := func() error {
		rows.Close()
		err := rows.Err()
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return rows, finish, nil
}
