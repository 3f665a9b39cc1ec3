package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

func TestClaimAgingIsExact(t *testing.T) {
	const boost = 15 * time.Minute
	now := t0.Add(123 * time.Microsecond)
	cases := []struct {
		name      string
		lowestAge time.Duration
		boost     time.Duration
		lowestWin bool
	}{
		// 0 + floor(60/15) = 4 ties CRITICAL's 4; the earlier due time wins.
		{"60 min ties and wins on due time", 60 * time.Minute, boost, true},
		{"a microsecond short of 60 min loses", 60*time.Minute - time.Microsecond, boost, false},
		{"75 min beats critical", 75 * time.Minute, boost, true},
		{"boost 0 disables aging", 24 * time.Hour, 0, false},
		{"negative boost disables aging", 24 * time.Hour, -time.Minute, false},
		// An interval that is not a whole number of microseconds: 4 intervals
		// of 7s+1ns are 28s+4ns, so 28s+3µs of waiting is enough, 28s is not.
		{"odd interval, enough", 28*time.Second + 3*time.Microsecond, 7*time.Second + time.Nanosecond, true},
		{"odd interval, short", 28 * time.Second, 7*time.Second + time.Nanosecond, false},
		// Centuries of waiting at a nanosecond interval overflow nothing.
		{"ancient job", 250 * 365 * 24 * time.Hour, time.Nanosecond, true},
	}
	dsn, _ := testDB(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, schema := testDB(t)
			s := openSchema(t, dsn, schema)
			lowest := job(spi.PriorityLowest, now.Add(-tc.lowestAge))
			critical := job(spi.PriorityCritical, now)
			insert(t, s, critical, lowest)
			first := claim(t, s, "n", 1, now, tc.boost)
			require.Len(t, first, 1)
			if tc.lowestWin {
				assert.Equal(t, lowest.ID, first[0].ID)
			} else {
				assert.Equal(t, critical.ID, first[0].ID)
			}
		})
	}
}

func TestClaimFailsCorruptRowsInsteadOfBlocking(t *testing.T) {
	s := openStore(t)
	bad := job(spi.PriorityCritical, t0.Add(-time.Hour))
	bad2 := job(spi.PriorityHigh, t0.Add(-time.Hour))
	good := job(spi.PriorityLow, t0)
	insert(t, s, bad, bad2, good)
	exec(t, s, `UPDATE `+qualify(s.schema, "scheduler_job")+` SET params = 'not json' WHERE job_id = $1`, bad.ID)
	exec(t, s, `UPDATE `+qualify(s.schema, "scheduler_job")+` SET created_time = 'infinity' WHERE job_id = $1`, bad2.ID)

	got := claim(t, s, "n", 2, t0, 0)
	assert.Empty(t, got, "the corrupt jobs were the best candidates")
	for _, id := range []uuid.UUID{bad.ID, bad2.ID} {
		var status, lastErr string
		var finished *time.Time
		require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT status, last_error, finished_time FROM `+qualify(s.schema, "scheduler_job")+` WHERE job_id = $1`, id).Scan(&status, &lastErr, &finished))
		assert.Equal(t, "FAILED", status)
		assert.Contains(t, lastErr, "corrupt job row")
		assert.Contains(t, lastErr, id.String())
		assert.Contains(t, lastErr, map[uuid.UUID]string{bad.ID: "params", bad2.ID: "time"}[id])
		require.NotNil(t, finished)
		assert.True(t, finished.Equal(t0))
		_, err := s.GetJob(context.Background(), id)
		assert.ErrorIs(t, err, spi.ErrCorruptJob, "GetJob keeps reporting the row as corrupt")
	}
	assert.Equal(t, []uuid.UUID{good.ID}, ids(claim(t, s, "n", 1, t0, 0)))
}

func TestCorruptRowsAreReported(t *testing.T) {
	cases := map[string]string{
		"unknown status":        `status = 'EXPLODED'`,
		"priority out of range": `priority = 9`,
		"params not an object":  `params = '[1, 2]'`,
		"params not strings":    `params = '{"a": 1}'`,
		"infinite time":         `finished_time = '-infinity'`,
	}
	s := openStore(t)
	for name, set := range cases {
		t.Run(name, func(t *testing.T) {
			j := job(spi.PriorityNormal, t0)
			insert(t, s, j)
			exec(t, s, `UPDATE `+qualify(s.schema, "scheduler_job")+` SET `+set+` WHERE job_id = $1`, j.ID)
			_, err := s.GetJob(context.Background(), j.ID)
			require.ErrorIs(t, err, spi.ErrCorruptJob)
			assert.Contains(t, err.Error(), j.ID.String())
			exec(t, s, `DELETE FROM `+qualify(s.schema, "scheduler_job")+` WHERE job_id = $1`, j.ID)
		})
	}
}

// seqScanOnJobs matches a sequential scan of scheduler_job (and not of
// scheduler_job_tag).
var seqScanOnJobs = regexp.MustCompile(`Seq Scan on scheduler_job(\s|$)`)

// explain returns the plan of q with args (a custom plan for those values).
func explain(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), "EXPLAIN "+q, args...)
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return strings.Join(lines, "\n")
}

// explainGeneric returns the generic plan of q, the plan a prepared
// statement may settle on after a few executions: q is prepared with the
// parameter types types and executed with the literal arguments lits.
func explainGeneric(t *testing.T, s *Store, q, types, lits string) string {
	t.Helper()
	return strings.Join(explainPrepared(t, s, "SET LOCAL plan_cache_mode = force_generic_plan", "", q, types, lits), "\n")
}

// explainPrepared prepares q, of parameter types types, on a connection
// of s's pool, in a transaction that first runs setup, and returns the
// lines of EXPLAIN opts of its execution with the literal arguments lits.
// The transaction is rolled back and the statement deallocated.
func explainPrepared(t *testing.T, s *Store, setup, opts, q, types, lits string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := s.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, setup)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `PREPARE explain_probe(`+types+`) AS `+q)
	require.NoError(t, err)
	defer func() { _, _ = conn.Exec(ctx, `DEALLOCATE explain_probe`) }()
	rows, err := tx.Query(ctx, `EXPLAIN `+opts+` EXECUTE explain_probe(`+lits+`)`)
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return lines
}

// TestPlansUseIndexes checks, on a backlog of 20,000 due PENDING jobs (plus
// running, finished and failed ones) after ANALYZE, that the hot statements
// never scan scheduler_job sequentially, in custom and in generic plans:
// the claim reads each priority level from idx_scheduler_job_claim, the
// owner writes find their rows by primary key.
func TestPlansUseIndexes(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	jobs := make([]*spi.Job, 20000)
	for i := range jobs {
		jobs[i] = job(spi.Priority(i%spi.NumPriorities), t0.Add(-time.Duration(i)*time.Second))
		if i%10 == 0 {
			jobs[i].Tags = []string{"t" + fmt.Sprint(i%7)}
		}
		if i%13 == 0 {
			jobs[i].Resource, jobs[i].ResourceLimit = "r"+fmt.Sprint(i%5), 1000
		}
	}
	insert(t, s, jobs...)
	for _, j := range jobs[:2000] {
		require.NoError(t, s.PutProperty(ctx, j.ID, "tenant", "c"+fmt.Sprint(j.ID[15]%50)))
	}
	running := claim(t, s, "node-a", 600, t0, 15*time.Minute)
	var cs []spi.Completion
	for i, j := range running[:300] {
		o := spi.OutcomeSucceeded
		if i%3 == 0 {
			o = spi.OutcomeFailed
		}
		cs = append(cs, spi.Completion{ClaimRef: ref(j), Outcome: o, FinishedAt: t0})
	}
	_, err := s.CompleteJobs(ctx, cs)
	require.NoError(t, err)
	exec(t, s, `ANALYZE `+qualify(s.schema, "scheduler_job"))
	exec(t, s, `ANALYZE `+qualify(s.schema, "scheduler_job_tag"))
	exec(t, s, `ANALYZE `+qualify(s.schema, "scheduler_job_property"))
	var holders int
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM `+qualify(s.schema, "scheduler_job")+
		` WHERE status = 'RUNNING' AND resource_name IS NOT NULL`).Scan(&holders))
	require.NotZero(t, holders, "some permits are held")

	now := t0.Format(time.RFC3339Nano)
	var idLits, seqLits []string
	for _, j := range running[300:400] {
		idLits = append(idLits, "'"+j.ID.String()+"'")
		seqLits = append(seqLits, "1")
	}
	idArr := "ARRAY[" + strings.Join(idLits, ",") + "]::uuid[]"
	seqArr := "ARRAY[" + strings.Join(seqLits, ",") + "]::bigint[]"
	n := len(idLits)
	rep := func(v string) string { return "ARRAY[" + strings.TrimSuffix(strings.Repeat(v+",", n), ",") + "]" }
	statusArr := rep("'SUCCEEDED'") + "::text[]"
	timeArr := rep("'"+now+"'") + "::timestamptz[]"
	nullTimeArr := rep("NULL") + "::timestamptz[]"
	intArr := rep("0") + "::integer[]"
	nullTextArr := rep("NULL") + "::text[]"
	nullByteArr := rep("NULL") + "::bytea[]"

	var ids []uuid.UUID
	var seqs []int64
	for _, j := range running[300:400] {
		ids = append(ids, j.ID)
		seqs = append(seqs, 1)
	}
	statuses := slices.Repeat([]string{"SUCCEEDED"}, n)
	times := slices.Repeat([]time.Time{t0}, n)
	tasks, taskLits := []string{"other", "send-email"}, "'other', 'send-email'"
	failCorrupt, _ := s.dialect.FailCorruptSQL(t0, "x", pgUUID(jobs[5].ID), 1)
	failCorruptArgs := []any{"x", t0, jobs[5].ID, int64(1)}
	get, _ := s.dialect.GetJobSQL(jobs[5].ID)
	list, _ := s.dialect.ListJobsSQL(spi.ListParams{After: uuid.Nil, Status: ""}, 101)
	listDLQ, _ := s.dialect.ListJobsSQL(spi.ListParams{After: uuid.Nil, Status: spi.StatusFailed}, 101)
	findBy, _ := s.dialect.FindByPropertySQL("tenant", "c7", 10)
	// The portable reads and writes by id take an IN list of ids.
	pgIDs := sqlcore.Conv(ids, pgUUID)
	uuids, uuidLits := strings.TrimSuffix(strings.Repeat("uuid, ", n), ", "), strings.Join(idLits, ", ")
	check, checkArgs := s.dialect.RunningSQL(ids, false)
	release, releaseArgs := s.dialect.ReleaseSQL(t0, ids)
	orphans, orphansArgs := s.dialect.OrphansSQL(t0, []string{"gone"})
	requeue, requeueArgs := s.dialect.RequeueSQL(t0, pgIDs)
	bury, buryArgs := s.dialect.BurySQL(t0, "crashed", pgIDs)
	// A claim of two tasks: a locked scan per level (its LATERAL), and
	// per task and level the strict order's probe and merged scan.
	strictClaim := spi.NumPriorities * (1 + 2*2)
	cases := []struct {
		name, q     string
		args        []any
		types, lits string
		index       string // an index the plan must use
		count       int    // how many times
	}{
		{"claim", s.sql.claim(claimKey{shape: 0, tasks: 2}), []any{t0, 100, int64(15 * time.Minute), "n", tasks[0], tasks[1]},
			"timestamptz, bigint, bigint, text, text, text", "'" + now + "', 100, 900000000000, 'n', " + taskLits, "idx_scheduler_job_claim", strictClaim},
		{"claim of one task", s.sql.claim(claimKey{shape: 0, tasks: 1}), []any{t0, 100, int64(15 * time.Minute), "n", tasks[1]},
			"timestamptz, bigint, bigint, text, text", "'" + now + "', 100, 900000000000, 'n', 'send-email'", "idx_scheduler_job_claim", spi.NumPriorities},
		{"claim: permit holders", s.sql.claim(claimKey{shape: 0, tasks: 2}), []any{t0, 100, int64(15 * time.Minute), "n", tasks[0], tasks[1]},
			"timestamptz, bigint, bigint, text, text, text", "'" + now + "', 100, 900000000000, 'n', " + taskLits, "idx_scheduler_job_resource", spi.NumPriorities * (1 + 2)},
		{"claim tagged", s.sql.claim(claimKey{shape: tagAll | tagAny | tagNone, tasks: 2}), []any{t0, 100, int64(15 * time.Minute), "n", tasks[0], tasks[1], []string{"t3"}, []string{"t3", "t4"}, []string{"t5"}},
			"timestamptz, bigint, bigint, text, text, text, text[], text[], text[]", "'" + now + "', 100, 900000000000, 'n', " + taskLits + ", ARRAY['t3'], ARRAY['t3','t4'], ARRAY['t5']",
			"idx_scheduler_job_claim", strictClaim},
		{"claim tagged: tag lookups", s.sql.claim(claimKey{shape: tagAll | tagAny | tagNone, tasks: 2}), []any{t0, 100, int64(15 * time.Minute), "n", tasks[0], tasks[1], []string{"t3"}, []string{"t3", "t4"}, []string{"t5"}},
			"timestamptz, bigint, bigint, text, text, text, text[], text[], text[]", "'" + now + "', 100, 900000000000, 'n', " + taskLits + ", ARRAY['t3'], ARRAY['t3','t4'], ARRAY['t5']",
			"scheduler_job_tag_pkey", 3*spi.NumPriorities*(1+2) + 1}, // a probe per list and scan, and the tags returned
		{"claim any", s.sql.claim(claimKey{shape: tagAny, tasks: 2}), []any{t0, 100, int64(15 * time.Minute), "n", tasks[0], tasks[1], []string{"t3"}},
			"timestamptz, bigint, bigint, text, text, text, text[]", "'" + now + "', 100, 900000000000, 'n', " + taskLits + ", ARRAY['t3']", "idx_scheduler_job_claim", strictClaim},
		{"permit claim: candidates", s.sql.claim(claimKey{candidates: true, shape: 0, tasks: 2}), []any{t0, 100, tasks[0], tasks[1]},
			"timestamptz, bigint, text, text", "'" + now + "', 100, " + taskLits, "idx_scheduler_job_claim", spi.NumPriorities},
		{"permit claim: tagged candidates", s.sql.claim(claimKey{candidates: true, shape: tagAll | tagNone, tasks: 2}), []any{t0, 100, tasks[0], tasks[1], []string{"t1"}, []string{"t2"}},
			"timestamptz, bigint, text, text, text[], text[]", "'" + now + "', 100, " + taskLits + ", ARRAY['t1'], ARRAY['t2']", "idx_scheduler_job_claim", spi.NumPriorities},
		{"permit claim: holders", s.sql.countHolders, []any{[]string{"r1", "r2"}},
			"text[]", "ARRAY['r1','r2']", "idx_scheduler_job_resource", 1},
		{"permit claim: update", s.sql.claimIDs, []any{ids, "n", t0},
			"uuid[], text, timestamptz", idArr + ", 'n', '" + now + "'", "scheduler_job_pkey", 1},
		{"check claims", check, checkArgs, uuids, uuidLits, "scheduler_job_pkey", 1},
		{"find by property", findBy, []any{"tenant", "c7", 10},
			"text, text, bigint", "'tenant', 'c7', 10", "idx_scheduler_job_property_value", 1},
		{"properties by prefix", s.sql.propertiesByPrefix, []any{jobs[5].ID, "ten"},
			"uuid, text", "'" + jobs[5].ID.String() + "', 'ten'", "scheduler_job_property_pkey", 1},
		{"update state", s.sql.updateState, []any{jobs[5].ID, "ns", []byte("{}"), 0, nil},
			"uuid, text, bytea, bigint, bigint", "'" + jobs[5].ID.String() + "', 'ns', '{}', 0, NULL", "scheduler_job_state_pkey", 1},
		{"complete", s.sql.complete, []any{ids, seqs, statuses, times, make([]*time.Time, n), make([]int32, n), make([]*string, n), make([][]byte, n), make([]*string, n)},
			"uuid[], bigint[], text[], timestamptz[], timestamptz[], integer[], text[], bytea[], text[]",
			strings.Join([]string{idArr, seqArr, statusArr, timeArr, nullTimeArr, intArr, nullTextArr, nullByteArr, nullTextArr}, ", "), "scheduler_job_pkey", 1},
		{"complete successes", s.sql.completeSucceeded, []any{ids, seqs, times, make([][]byte, n), make([]*string, n)},
			"uuid[], bigint[], timestamptz[], bytea[], text[]",
			strings.Join([]string{idArr, seqArr, timeArr, nullByteArr, nullTextArr}, ", "), "scheduler_job_pkey", 1},
		{"release", release, releaseArgs, "timestamptz, " + uuids, "'" + now + "', " + uuidLits, "scheduler_job_pkey", 1},
		{"fail corrupt", failCorrupt, failCorruptArgs,
			"text, timestamptz, uuid, bigint", "'x', '" + now + "', '" + jobs[5].ID.String() + "', 1", "scheduler_job_pkey", 1},
		{"recover: orphans", orphans, orphansArgs, "text, timestamptz", "'gone', '" + now + "'", "idx_scheduler_job_owner", 1},
		{"recover: requeue", requeue, requeueArgs, "timestamptz, " + uuids, "'" + now + "', " + uuidLits, "scheduler_job_pkey", 1},
		{"recover: bury", bury, buryArgs, "text, timestamptz, " + uuids, "'crashed', '" + now + "', " + uuidLits, "scheduler_job_pkey", 1},
		{"get", get, []any{jobs[5].ID}, "uuid", "'" + jobs[5].ID.String() + "'", "scheduler_job_pkey", 1},
		{"list", list, []any{uuid.Nil, 101}, "uuid, bigint", "'" + uuid.Nil.String() + "', 101", "scheduler_job_pkey", 1},
		{"list DLQ", listDLQ, []any{uuid.Nil, 101}, "uuid, bigint", "'" + uuid.Nil.String() + "', 101", "idx_scheduler_job_failed", 1},
		{"existing keys", s.sql.existingKeys, []any{[]string{"a", "b"}}, "text[]", "ARRAY['a','b']", "uq_scheduler_job_idempotency_key", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for kind, plan := range map[string]string{
				"custom":  explain(t, s, tc.q, tc.args...),
				"generic": explainGeneric(t, s, tc.q, tc.types, tc.lits),
			} {
				assert.NotRegexp(t, seqScanOnJobs, plan, "%s plan scans scheduler_job:\n%s", kind, plan)
				assert.Equal(t, tc.count, strings.Count(plan, tc.index), "%s plan must use %s %d times:\n%s", kind, tc.index, tc.count, plan)
			}
		})
	}
	// A claim of any task reads the distinct pending tasks by a loose
	// index scan: probes of the claim index, one per task.
	plan := explain(t, s, s.sql.pendingTasks)
	assert.NotRegexp(t, seqScanOnJobs, plan, "pending tasks:\n%s", plan)
	assert.Contains(t, plan, "Index Only Scan using idx_scheduler_job_claim", "pending tasks:\n%s", plan)
}

// TestClaimKeepsAGenericPlan checks that PostgreSQL plans the claim once
// per connection and never anew (pinnedPlan), and that the settings that
// make it so end with the claim: the store, on one connection, claims a
// dozen times with one task and with three, and the connection's prepared
// claim statements then show generic plans only, while the connection's
// plan_cache_mode, jit and enable_seqscan are their defaults again. Left
// to choose, PostgreSQL makes five custom plans first, and keeps making
// them once the backlog is large (1 of a claim's 3.5 ms at 10,000,000
// pending jobs).
func TestClaimKeepsAGenericPlan(t *testing.T) {
	ctx := context.Background()
	s := openStoreWith(t, "pool_max_conns=1")
	jobs := make([]*spi.Job, 200)
	for k := range jobs {
		jobs[k] = job(spi.Priority(k%spi.NumPriorities), t0.Add(-time.Duration(k)*time.Second))
	}
	insert(t, s, jobs...)
	var before string
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT current_setting('plan_cache_mode') || ' ' || current_setting('jit') || ' ' || current_setting('enable_seqscan')`).Scan(&before))
	for _, tasks := range [][]string{{"send-email"}, {"other", "send-email", "third"}} {
		for range 12 {
			_, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n", Limit: 1, Now: t0, Tasks: tasks, BoostInterval: 15 * time.Minute})
			require.NoError(t, err)
		}
		q := s.sql.claim(claimKey{tasks: len(tasks)})
		var generic, custom int64
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1`, q).Scan(&generic, &custom))
		assert.Positive(t, generic, "%d tasks: no generic plan of the claim", len(tasks))
		assert.Zero(t, custom, "%d tasks: the claim was planned for its arguments %d times", len(tasks), custom)
	}
	var after string
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT current_setting('plan_cache_mode') || ' ' || current_setting('jit') || ' ' || current_setting('enable_seqscan')`).Scan(&after))
	assert.Equal(t, before, after, "the claim's settings outlived it")
}

// TestPinnedPlansOutgrowAnEmptyTable checks that the claim's plan, made
// while the table held one job, still finds rows by index and tuple id
// once it holds thousands (pinnedPlan's enable_seqscan): a plan cached
// then is kept until an ANALYZE, and PostgreSQL's own choice for so small
// a table reads the claimed rows by a sequential scan.
func TestPinnedPlansOutgrowAnEmptyTable(t *testing.T) {
	ctx := context.Background()
	s := openStoreWith(t, "pool_max_conns=1")
	insert(t, s, job(spi.PriorityNormal, t0))
	require.Len(t, claim(t, s, "n", 1, t0, 15*time.Minute), 1)
	more := make([]*spi.Job, 3000)
	for k := range more {
		more[k] = job(spi.PriorityNormal, t0.Add(-time.Duration(k)*time.Millisecond))
	}
	insert(t, s, more...)

	conn, err := s.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	// EXPLAIN EXECUTE shows the connection's cached generic plan.
	_, err = conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`)
	require.NoError(t, err)
	defer func() { _, _ = conn.Exec(ctx, `RESET plan_cache_mode`) }()
	var name string
	require.NoError(t, conn.QueryRow(ctx, `SELECT name FROM pg_prepared_statements WHERE statement = $1`, s.sql.claim(claimKey{tasks: 1})).Scan(&name))
	rows, err := conn.Query(ctx, `EXPLAIN EXECUTE `+pgx.Identifier{name}.Sanitize()+`(now(), 10, 0, 'n', 'send-email')`)
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	plan := strings.Join(lines, "\n")
	assert.NotRegexp(t, seqScanOnJobs, plan, "claim:\n%s", plan)
	assert.Contains(t, plan, "Tid Scan on scheduler_job j", "claim:\n%s", plan)
}

// TestClaimUnderOtherExecModes checks the claim and its pinned plan
// settings (one pgx batch) under the query modes a transaction-pooling
// PgBouncer needs (doc.go): unnamed statements (exec) and the simple
// protocol, where the batch is one query string.
func TestClaimUnderOtherExecModes(t *testing.T) {
	for _, mode := range []string{"exec", "simple_protocol"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			s := openStoreWith(t, "default_query_exec_mode="+mode)
			jobs := make([]*spi.Job, 5)
			for k := range jobs {
				jobs[k] = job(spi.Priority(k), t0.Add(-time.Duration(k)*time.Second))
			}
			insert(t, s, jobs...)
			got := claim(t, s, "n", 10, t0, 15*time.Minute)
			require.Len(t, got, 5)
			assert.Equal(t, spi.Priority(4), got[0].Priority, "claim order")
			cs := make([]spi.Completion, len(got))
			for k, j := range got {
				cs[k] = spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: t0}
			}
			applied, err := s.CompleteJobs(ctx, cs)
			require.NoError(t, err)
			assert.Equal(t, []bool{true, true, true, true, true}, applied)
			var after string
			require.NoError(t, s.pool.QueryRow(ctx, `SELECT current_setting('plan_cache_mode') || ' ' || current_setting('enable_seqscan')`).Scan(&after))
			assert.Equal(t, "auto on", after, "the claim's settings outlived it")
		})
	}
}

// TestStrictClaimReadsWhatItClaims checks the claim of ten tasks on a
// backlog of 10,000 jobs spread over the tasks and the five levels, none
// aged past its level: its pinned generic plan merges the tasks' ordered
// index scans (a Merge Append, no bitmap scan that would read every due
// job of a task), reads the levels below the top one not at all, and
// locks about what it claims: its WAL records (a lock, the update and its
// index entries per claimed row) stay under five per claimed row, where
// the locked scans of every task and level took more than fifty.
func TestStrictClaimReadsWhatItClaims(t *testing.T) {
	s := openStore(t)
	const tasks, limit = 10, 100
	var names []string
	for k := range tasks {
		names = append(names, fmt.Sprintf("task-%d", k))
	}
	jobs := make([]*spi.Job, 10000)
	for i := range jobs {
		jobs[i] = job(spi.Priority((i/tasks)%spi.NumPriorities), t0.Add(-time.Minute+time.Duration(i)*time.Millisecond))
		jobs[i].TaskName = names[i%tasks]
	}
	insert(t, s, jobs...)
	exec(t, s, `ANALYZE `+qualify(s.schema, "scheduler_job"))

	types := "timestamptz, bigint, bigint, text" + strings.Repeat(", text", tasks)
	lits := "'" + t0.Format(time.RFC3339Nano) + "', " + fmt.Sprint(limit) + ", " + fmt.Sprint(int64(time.Hour)) + ", 'n'"
	for _, n := range names {
		lits += ", '" + n + "'"
	}
	out := explainPrepared(t, s, pinnedPlan, "(ANALYZE, WAL, FORMAT JSON)", s.sql.claim(claimKey{shape: 0, tasks: tasks}), types, lits)
	text := strings.Join(out, "")
	var plan []struct {
		Plan struct {
			ActualRows int64 `json:"Actual Rows"`
			WALRecords int64 `json:"WAL Records"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(text), &plan))
	require.Len(t, plan, 1)
	assert.True(t, strings.Contains(text, `"Merge Append"`), "the tasks' scans of a level are merged")
	assert.False(t, strings.Contains(text, `"Bitmap Heap Scan"`), "no bitmap scan reads every due job of a task")
	assert.EqualValues(t, limit, plan[0].Plan.ActualRows, "the claim takes its limit")
	assert.Less(t, plan[0].Plan.WALRecords, int64(5*limit), "WAL records of a claim of %d jobs", limit)
}

// TestStrictClaimsTakeTurns holds the strict claims' lock of tasks a and b
// in a transaction that plays a concurrent claim: it moves the four best
// jobs to RUNNING. A claim of 2 waits for the lock, and its snapshot is
// taken once the transaction has committed: it claims the two jobs left.
// With its snapshot taken before the wait, its candidates (its limit of
// them, in the strict order) would be two of the four taken jobs, and it
// would claim none.
func TestStrictClaimsTakeTurns(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	var js []*spi.Job
	for i := range 6 {
		j := job(spi.PriorityNormal, t0.Add(time.Duration(i)*time.Second))
		j.TaskName = []string{"a", "b"}[i%2]
		js = append(js, j)
	}
	insert(t, s, js...)

	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, strictLock, strictLockKey(s.schema, spi.TaskSet([]string{"b", "a"})))
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `UPDATE `+s.sql.jobTable+` SET status = 'RUNNING' WHERE job_id = ANY($1::uuid[])`,
		[]uuid.UUID{js[0].ID, js[1].ID, js[2].ID, js[3].ID})
	require.NoError(t, err)

	claimed := make(chan []*spi.Job, 1)
	go func() {
		got, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n1", Limit: 2, Now: t0.Add(time.Hour), Tasks: []string{"a", "b"}})
		assert.NoError(t, err)
		claimed <- got
	}()
	require.Eventually(t, func() bool {
		var waiting bool
		err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity
			WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND datname = current_database()
				AND query = $1)`, strictLock).Scan(&waiting)
		return err == nil && waiting
	}, 10*time.Second, 5*time.Millisecond, "the claim waits for the transaction's lock")
	require.NoError(t, tx.Commit(ctx))
	require.ElementsMatch(t, []uuid.UUID{js[4].ID, js[5].ID}, ids(<-claimed))
}
