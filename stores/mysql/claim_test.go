package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
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
		{"odd interval, enough", 28*time.Second + 3*time.Microsecond, 7*time.Second + time.Nanosecond, true},
		{"odd interval, short", 28 * time.Second, 7*time.Second + time.Nanosecond, false},
		// Centuries of waiting at a nanosecond interval overflow nothing.
		{"ancient job", 250 * 365 * 24 * time.Hour, time.Nanosecond, true},
	}
	s := openStore(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
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
			// Clear the level for the next case.
			require.Len(t, claim(t, s, "n", 5, now, tc.boost), 1)
		})
	}
}

func TestClaimFailsCorruptRowsInsteadOfBlocking(t *testing.T) {
	s := openStore(t)
	bad := job(spi.PriorityCritical, t0.Add(-time.Hour))
	bad2 := job(spi.PriorityHigh, t0.Add(-time.Hour))
	good := job(spi.PriorityLow, t0)
	insert(t, s, bad, bad2, good)
	exec(t, s, `UPDATE `+table(s, "job")+` SET params = 'not json' WHERE job_id IN (?, ?)`, bad.ID[:], bad2.ID[:])

	got := claim(t, s, "n", 2, t0, 0)
	assert.Empty(t, got, "the corrupt jobs were the best candidates")
	for _, id := range []uuid.UUID{bad.ID, bad2.ID} {
		var status, lastErr string
		var finished sql.NullTime
		require.NoError(t, s.db.QueryRow(`SELECT status, last_error, finished_time FROM `+table(s, "job")+` WHERE job_id = ?`, id[:]).Scan(&status, &lastErr, &finished))
		assert.Equal(t, "FAILED", status)
		assert.Contains(t, lastErr, "corrupt job row")
		assert.Contains(t, lastErr, id.String())
		assert.Contains(t, lastErr, "params")
		require.True(t, finished.Valid)
		assert.True(t, finished.Time.Equal(t0))
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
	}
	s := openStore(t)
	for name, set := range cases {
		t.Run(name, func(t *testing.T) {
			j := job(spi.PriorityNormal, t0)
			insert(t, s, j)
			exec(t, s, `UPDATE `+table(s, "job")+` SET `+set+` WHERE job_id = ?`, j.ID[:])
			_, err := s.GetJob(context.Background(), j.ID)
			require.ErrorIs(t, err, spi.ErrCorruptJob)
			assert.Contains(t, err.Error(), j.ID.String())
			exec(t, s, `DELETE FROM `+table(s, "job")+` WHERE job_id = ?`, j.ID[:])
		})
	}
}

// TestPermitsAcrossStores: two stores (two pools, as two processes) claim
// jobs of one resource of limit 2 concurrently; the RUNNING holders, as the
// database counts them after every claim, never exceed 2.
func TestPermitsAcrossStores(t *testing.T) {
	dsn, database := testDB(t)
	s1 := openDatabase(t, dsn, database)
	s2 := openDatabase(t, dsn, database)
	var jobs []*spi.Job
	for i := range 60 {
		j := job(spi.Priority(i%spi.NumPriorities), t0.Add(-time.Duration(i)*time.Second))
		j.Resource, j.ResourceLimit = "gpu", 2
		jobs = append(jobs, j)
	}
	insert(t, s1, jobs...)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for w := range 6 {
		s := []*Store{s1, s2}[w%2]
		wg.Go(func() {
			for range 400 {
				mu.Lock()
				finished := done == len(jobs)
				mu.Unlock()
				if finished {
					return
				}
				got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{NodeID: fmt.Sprint("n", w), Limit: 3, Now: t0})
				if !assert.NoError(t, err) {
					return
				}
				var running int
				require.NoError(t, s.db.QueryRow(`SELECT COUNT(*) FROM `+table(s, "job")+` WHERE resource_name = 'gpu' AND status = 'RUNNING'`).Scan(&running))
				assert.LessOrEqual(t, running, 2, "RUNNING holders of gpu")
				if len(got) == 0 {
					continue
				}
				cs := make([]spi.Completion, len(got))
				for i, j := range got {
					cs[i] = spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: t0}
				}
				ok, err := s.CompleteJobs(context.Background(), cs)
				require.NoError(t, err)
				assert.NotContains(t, ok, false)
				mu.Lock()
				done += len(got)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, len(jobs), done, "every job ran")
}

// explainRows returns EXPLAIN's rows for q with args, as column maps.
func explainRows(t *testing.T, s *Store, q string, args ...any) []map[string]string {
	t.Helper()
	rows, err := s.db.Query("EXPLAIN "+q, args...)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		m := map[string]string{}
		for i, c := range cols {
			m[strings.ToLower(c)] = vals[i].String
		}
		out = append(out, m)
	}
	require.NoError(t, rows.Err())
	return out
}

func describePlan(plan []map[string]string) string {
	var b strings.Builder
	for _, r := range plan {
		fmt.Fprintf(&b, "%s %s table=%s type=%s key=%s key_len=%s ref=%s rows=%s extra=%s\n", r["id"], r["select_type"], r["table"], r["type"], r["key"], r["key_len"], r["ref"], r["rows"], r["extra"])
	}
	return b.String()
}

// TestPlansUseIndexes checks, on a backlog of 20,000 due PENDING jobs (plus
// running, finished and failed ones) after ANALYZE TABLE, that the hot
// statements never scan scheduler_job: each of the claim's five subqueries
// reads its priority level from idx_scheduler_job_claim (and its tag and
// holder subqueries use the tag table's key and idx_scheduler_job_resource),
// the reads of the pending tasks and of the oldest due job probe the claim
// index too,
// the owner writes and read-backs find their rows by primary key, the
// dead-letter listing and recovery use idx_scheduler_job_status.
func TestPlansUseIndexes(t *testing.T) {
	if testing.Short() {
		t.Skip("inserts 20,000 jobs")
	}
	ctx := context.Background()
	s := openStore(t)
	jobs := make([]*spi.Job, 20000)
	for i := range jobs {
		jobs[i] = job(spi.Priority(i%spi.NumPriorities), t0.Add(-time.Duration(i)*time.Second))
		if i%10 == 0 {
			jobs[i].Tags = []string{"t" + fmt.Sprint(i%7)}
		}
		if i%50 == 0 {
			jobs[i].Resource, jobs[i].ResourceLimit = "r"+fmt.Sprint(i%3), 5
		}
	}
	insert(t, s, jobs...)
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
	exec(t, s, `ANALYZE TABLE `+table(s, "job")+`, `+table(s, "tag"))

	tasks := []string{"other", "send-email"} // two range scans per level
	tagged, tagArgs := s.dialect.CandidatesSQL(tasks, spi.TagFilter{All: []string{"t1"}, Any: []string{"t2", "t3"}, None: []string{"t4"}}, t0, 100)
	plain, plainArgs := s.dialect.CandidatesSQL(tasks, spi.TagFilter{}, t0, 100)
	ids := make([]uuid.UUID, 0, 100)
	for _, j := range running[300:400] {
		ids = append(ids, j.ID)
	}
	var buf strings.Builder
	for k, id := range ids {
		if k > 0 {
			buf.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&buf, "SELECT 0x%x AS id, 1 AS seq, 'SUCCEEDED' AS st", id[:])
	}
	claimed, claimedArgs := s.dialect.JobsSQL(ids)
	lockRunning, runningArgs := s.dialect.RunningSQL(ids, true)
	get, getArgs := s.dialect.GetJobSQL(jobs[5].ID)
	list, listArgs := s.dialect.ListJobsSQL(spi.ListParams{After: uuid.Nil, Status: ""}, 101)
	orphans, orphansArgs := s.dialect.OrphansSQL(t0, nil)
	named, namedArgs := s.dialect.OrphansSQL(t0, []string{"gone"})
	listDLQ, listDLQArgs := s.dialect.ListJobsSQL(spi.ListParams{After: uuid.Nil, Status: spi.StatusFailed}, 101)
	holders, holdersArgs := s.dialect.Syntax.SQL(countHoldersSQL, sqlcore.In([]any{[]byte("r0"), []byte("r1")}))
	oldest, oldestArgs := s.dialect.OldestDueSQL(t0)
	cases := []struct {
		name  string
		q     string
		args  []any
		index map[string]string // table alias -> the index it must use
		count int               // rows of the plan on table x (the claim's levels)
	}{
		{"claim", plain, plainArgs, map[string]string{"x": "idx_scheduler_job_claim", "r": "idx_scheduler_job_resource"}, len(tasks) * spi.NumPriorities},
		{"claim with tags", tagged, tagArgs, map[string]string{"x": "idx_scheduler_job_claim", "r": "idx_scheduler_job_resource", "t": "PRIMARY"}, len(tasks) * spi.NumPriorities},
		{"pending tasks", s.dialect.PendingTasksSQL, nil, map[string]string{"scheduler_job": "idx_scheduler_job_claim"}, 0},
		{"pending counts", s.dialect.PendingCountSQL, nil, map[string]string{"scheduler_job": "idx_scheduler_job_claim"}, 0},
		{"oldest due", oldest, oldestArgs, map[string]string{"j": "idx_scheduler_job_claim", "scheduler_job": "idx_scheduler_job_claim"}, 0},
		{"claimed rows", claimed, claimedArgs, map[string]string{"j": "PRIMARY", "t": "PRIMARY"}, 0},
		{"lock running", lockRunning, runningArgs, nil, 0},
		{"complete", `UPDATE ` + table(s, "job") + ` j JOIN (` + buf.String() + `) v ON j.job_id = v.id SET j.status = v.st WHERE j.status = 'RUNNING' AND j.claim_seq = v.seq`, nil,
			map[string]string{"j": "PRIMARY"}, 0},
		{"get", get, getArgs, map[string]string{"j": "PRIMARY"}, 0},
		{"list", list, listArgs, map[string]string{"j": "PRIMARY"}, 0},
		{"list DLQ", listDLQ, listDLQArgs, map[string]string{"j": "idx_scheduler_job_status"}, 0},
		{"count holders", holders, holdersArgs,
			map[string]string{"scheduler_job": "idx_scheduler_job_resource"}, 0},
		{"recover", orphans, orphansArgs, map[string]string{"j": "idx_scheduler_job_status", "n": "PRIMARY"}, 0}, // a range of the RUNNING rows
		{"recover named", named, namedArgs, map[string]string{"j": "idx_scheduler_job_status", "n": "PRIMARY"}, 0},
		{"existing keys", `SELECT idempotency_key, job_id FROM ` + table(s, "job") + ` WHERE idempotency_key IN (?, ?) LOCK IN SHARE MODE`, []any{[]byte("a"), []byte("b")},
			map[string]string{"scheduler_job": "uq_scheduler_job_idempotency_key"}, 0},
	}
	t.Run("claim reads", func(t *testing.T) {
		// The rows the claim's candidates statement reads, as the server's
		// handler counters count them: about five levels of 100 (plus the
		// subqueries' lookups), not the 20,000 of the backlog.
		conn, err := s.db.Conn(ctx)
		require.NoError(t, err)
		defer conn.Close()
		reads := func() int64 {
			rows, err := conn.QueryContext(ctx, `SHOW SESSION STATUS LIKE 'Handler_read%'`)
			require.NoError(t, err)
			defer rows.Close()
			var total int64
			for rows.Next() {
				var name string
				var n int64
				require.NoError(t, rows.Scan(&name, &n))
				total += n
			}
			return total
		}
		tx, err := conn.BeginTx(ctx, nil)
		require.NoError(t, err)
		defer tx.Rollback()
		before := reads()
		// A filter most jobs pass: one that none passes visits every due
		// job of each level, in any store.
		q, args := s.dialect.CandidatesSQL([]string{"send-email"}, spi.TagFilter{None: []string{"t4"}}, t0, 100)
		rows, err := tx.QueryContext(ctx, q, args...)
		require.NoError(t, err)
		for rows.Next() {
		}
		require.NoError(t, rows.Err())
		rows.Close()
		n := reads() - before
		t.Logf("handler reads of a claim of 100 (tag filter None: t4) over 20,000 jobs: %d", n)
		assert.Less(t, n, int64(3000), "the claim must read O(limit) rows, not the backlog")
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := explainRows(t, s, tc.q, tc.args...)
			desc := describePlan(plan)
			onX, skipped, guards, pauses := 0, 0, 0, 0
			for _, r := range plan {
				table := r["table"]
				switch {
				case r["select_type"] == "SUBQUERY" && table == "" && r["extra"] == "no matching row in const table":
					// A level's probe of the paused tasks (notPaused): the
					// empty table read as a constant, once.
					pauses++
				case r["select_type"] == "SUBQUERY" && table == "":
					// A level's guard (Syntax.ScanGuard): the min/max
					// optimization's one index probe, never a scan.
					guards++
					assert.Contains(t, []string{"Select tables optimized away", "No matching min/max row"}, r["extra"], "a guard is read by a min/max probe:\n%s", desc)
				case (r["select_type"] == "PRIMARY" || r["select_type"] == "UNION") && r["extra"] == "Impossible WHERE":
					skipped++ // a level its guard found empty: not scanned
				}
				if table == "" || strings.HasPrefix(table, "<") {
					continue // union results, derived tables, guards
				}
				assert.NotEqual(t, "ALL", r["type"], "full scan of %s:\n%s", table, desc)
				if want, ok := tc.index[table]; ok {
					assert.Equal(t, want, r["key"], "index of %s:\n%s", table, desc)
				}
				if table == "x" {
					onX++
					assert.NotContains(t, r["extra"], "filesort", "the level is read in index order:\n%s", desc)
				}
			}
			if strings.Contains(tc.q, "scheduler_task_pause") {
				assert.Equal(t, tc.count, pauses, "one probe of the paused tasks per priority level:\n%s", desc)
			}
			if tc.count > 0 && strings.Contains(tc.q, "MAX(y.scheduled_time)") {
				assert.Equal(t, tc.count, guards, "one guard per priority level:\n%s", desc)
				assert.Equal(t, tc.count, onX+skipped, "one index range per priority level, or its guard's skip:\n%s", desc)
				// The jobs of this test fill some levels of each task
				// and leave others empty: both kinds are in the plan.
				assert.Positive(t, onX, "no level scanned:\n%s", desc)
				assert.Positive(t, skipped, "no empty level skipped:\n%s", desc)
			} else {
				assert.Equal(t, tc.count, onX, "one index range per priority level:\n%s", desc)
			}
			t.Logf("%s plan:\n%s", tc.name, desc)
		})
	}
}

// TestClaimKeysOfAnOlderDatabase checks migration 13 on a database that
// holds jobs from before it: its virtual columns are computed for the
// rows already there, so a PENDING job is claimed through the rebuilt
// claim index, a RUNNING job that names a resource still counts as its
// holder, and a job that another migration left FAILED is in neither.
func TestClaimKeysOfAnOlderDatabase(t *testing.T) {
	ctx := context.Background()
	dsn, database, db, migs := olderDatabase(t, 12)
	require.Equal(t, "claim_keys", migs[12].Name)

	pending, holder, waiting, failed := newID(), newID(), newID(), newID()
	row := func(id uuid.UUID, status, resource, owner string) {
		var res, own any
		if resource != "" {
			res = []byte(resource)
		}
		if owner != "" {
			own = []byte(owner)
		}
		_, err := db.ExecContext(ctx, `INSERT INTO scheduler_job (job_id, task_name, payload, status, scheduled_time, resource_name, resource_limit, owner_node, claim_seq)
			VALUES (?, 'send-email', '{}', ?, ?, ?, 1, ?, 1)`, id[:], status, t0.Add(-time.Minute), res, own)
		require.NoError(t, err)
	}
	row(holder, "RUNNING", "printer", "node-a")
	row(waiting, "PENDING", "printer", "")
	row(pending, "PENDING", "", "")
	row(failed, "FAILED", "", "")

	applied, err := migrate(ctx, db, migs)
	require.NoError(t, err)
	assert.Equal(t, []int{13, 14, 15, 16, 17, 18, 19, 20, 21, 22}, applied)
	var claimTask, resourceStatus sql.NullString
	require.NoError(t, db.QueryRowContext(ctx, `SELECT claim_task, resource_status FROM scheduler_job WHERE job_id = ?`, holder[:]).Scan(&claimTask, &resourceStatus))
	assert.Equal(t, sql.NullString{}, claimTask, "a RUNNING job has no claim key")
	assert.Equal(t, sql.NullString{String: "RUNNING", Valid: true}, resourceStatus)

	s := openDatabase(t, dsn, database)
	got := claim(t, s, "node-b", 10, t0, 0)
	assert.Equal(t, []uuid.UUID{pending}, ids(got), "the printer's one permit is held by the job that ran before the migration")

	// Once the holder completes, its permit is free for the waiting job.
	ok, err := s.CompleteJobs(ctx, []spi.Completion{{ClaimRef: spi.ClaimRef{JobID: holder, ClaimSeq: 1}, Outcome: spi.OutcomeSucceeded, FinishedAt: t0}})
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, ok)
	assert.Equal(t, []uuid.UUID{waiting}, ids(claim(t, s, "node-b", 10, t0, 0)))
}
