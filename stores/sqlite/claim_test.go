package sqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestClaimAgingIsExact(t *testing.T) {
	const boost = 15 * time.Minute
	now := t0
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
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
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

// queryPlan returns the EXPLAIN QUERY PLAN lines of q.
func queryPlan(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	rows, err := s.db.Query(`EXPLAIN QUERY PLAN `+q, args...)
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &notused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	return strings.Join(plan, "\n")
}

// TestClaimUsesTheIndex checks the candidates statement of every tag filter
// shape, for two tasks: each task and level is a range scan of the
// task-led claim index in its order (no temporary sort), the tag conditions look up the tag table's primary key,
// and the holders of a resource are counted from the partial index.
func TestClaimUsesTheIndex(t *testing.T) {
	s := openStore(t)
	const tasks = 2
	for shape := range 8 { // which of All, Any and None are not empty
		var tf spi.TagFilter
		tagLookups := 0
		for bit, l := range []struct {
			list *[]string
			tags []string
		}{{&tf.All, []string{"a", "b"}}, {&tf.Any, []string{"c"}}, {&tf.None, []string{"d"}}} {
			if shape&(1<<bit) != 0 {
				*l.list = l.tags
				tagLookups += tasks * spi.NumPriorities
			}
		}
		q, args := dialect.CandidatesSQL([]string{"a", "b"}, tf, t0, 10)
		text := queryPlan(t, s, q, args...)
		assert.Equal(t, tasks*spi.NumPriorities, strings.Count(text, "USING INDEX idx_scheduler_job_claim (task_name=? AND priority=? AND scheduled_time<?)"), "shape %d:\n%s", shape, text)
		assert.Equal(t, tasks*spi.NumPriorities, strings.Count(text, "idx_scheduler_job_resource"), "shape %d:\n%s", shape, text)
		assert.Equal(t, tagLookups, strings.Count(text, "sqlite_autoindex_scheduler_job_tag_1"), "shape %d:\n%s", shape, text)
		assert.NotRegexp(t, `SCAN (scheduler_job|x|r|t)( |$)`, text, "shape %d", shape)
		assert.NotContains(t, text, "TEMP B-TREE", "shape %d:\n%s", shape, text)
	}
	text := queryPlan(t, s, `SELECT r.value, (SELECT COUNT(*) FROM scheduler_job j
			WHERE j.resource_name = r.value AND j.status = 'RUNNING') FROM json_each(?) r`, `["a"]`)
	assert.Contains(t, text, "idx_scheduler_job_resource", text)
	text = queryPlan(t, s, claimUpdate, "n", t0.UnixMicro(), `["a"]`)
	assert.Contains(t, text, "sqlite_autoindex_scheduler_job_1 (job_id=?)", "the claimed rows are found by primary key:\n%s", text)
	assert.NotContains(t, text, "idx_scheduler_job_claim", text)
	text = queryPlan(t, s, dialect.PendingTasksSQL)
	// The first task is the first entry of the claim index (an ordered
	// scan of one row, LIMIT 1), each next one a seek past the last.
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "SCAN scheduler_job") {
			assert.Contains(t, line, "USING COVERING INDEX idx_scheduler_job_claim", "the pending tasks are read by the claim index:\n%s", text)
		}
	}
	assert.Contains(t, text, "SEARCH scheduler_job USING COVERING INDEX idx_scheduler_job_claim (task_name>?)", text)
	assert.NotContains(t, text, "TEMP B-TREE", text)
}

// TestStatusReadsUseThePartialIndexes checks the plans of the reads that
// test a job's status (migration 13): the fences and the writes by id
// look each id up by primary key rather than scan a status's index, and
// the reads of all the jobs of one status scan that status's partial index
// in id order rather than the table.
func TestStatusReadsUseThePartialIndexes(t *testing.T) {
	s := openStore(t)
	byID := []uuid.UUID{newID(), newID()}
	const pk = "USING INDEX sqlite_autoindex_scheduler_job_1 (job_id=?)"
	for name, st := range map[string]func() (string, []any){
		"fence":   func() (string, []any) { return dialect.RunningSQL(byID, false) },
		"release": func() (string, []any) { return dialect.ReleaseSQL(t0, byID) },
		"requeue": func() (string, []any) { return dialect.RequeueSQL(t0, []string{"a", "b"}) },
		"bury":    func() (string, []any) { return dialect.BurySQL(t0, "gone", []string{"a", "b"}) },
		"completion": func() (string, []any) {
			q, args := dialect.Syntax.Completion(spi.Completion{ClaimRef: spi.ClaimRef{JobID: byID[0], ClaimSeq: 1}, Outcome: spi.OutcomeSucceeded})
			return dialect.Syntax.SQL(q, args...)
		},
	} {
		q, args := st()
		text := queryPlan(t, s, q, args...)
		assert.Contains(t, text, pk, "%s:\n%s", name, text)
		assert.NotContains(t, text, "SCAN", "%s:\n%s", name, text)
	}
	for _, nodes := range [][]string{nil, {"gone"}} {
		q, args := dialect.OrphansSQL(t0, nodes)
		text := queryPlan(t, s, q, args...)
		assert.Contains(t, text, "SCAN j USING INDEX idx_scheduler_job_running", text)
		assert.NotContains(t, text, "TEMP B-TREE", text)
	}
	for st, index := range map[spi.Status]string{
		spi.StatusRunning: "idx_scheduler_job_running",
		spi.StatusFailed:  "idx_scheduler_job_failed",
		spi.StatusWaiting: "idx_scheduler_job_waiting",
	} {
		q, args := dialect.ListJobsSQL(spi.ListParams{Status: st}, 10)
		text := queryPlan(t, s, q, args...)
		assert.Contains(t, text, "SEARCH j USING INDEX "+index+" (job_id>?)", "list %s:\n%s", st, text)
	}
	text := queryPlan(t, s, dialect.PendingCountSQL)
	assert.Contains(t, text, "COVERING INDEX idx_scheduler_job_claim", text)

	// The gauges' counts: each status group through its partial index,
	// never the table (the RUNNING jobs, as many as the fleet runs at
	// once, are read through their index and rows).
	counts, err := dialect.JobCountsSQL(context.Background(), s.db)
	require.NoError(t, err)
	text = queryPlan(t, s, counts)
	for _, index := range []string{"idx_scheduler_job_claim", "idx_scheduler_job_running", "idx_scheduler_job_settled"} {
		assert.Contains(t, text, "INDEX "+index, "counts:\n%s", text)
	}
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "SCAN scheduler_job") {
			assert.Contains(t, line, " USING ", "a table scan in the counts:\n%s", text)
		}
	}
}

func TestClaimFailsCorruptRowsInsteadOfBlocking(t *testing.T) {
	s := openStore(t)
	bad := job(spi.PriorityCritical, t0.Add(-time.Hour))
	good := job(spi.PriorityLow, t0)
	insert(t, s, bad, good)
	exec(t, s, `UPDATE scheduler_job SET params = 'not json' WHERE job_id = ?`, bad.ID.String())

	got := claim(t, s, "n", 1, t0, 0)
	assert.Empty(t, got, "the corrupt job was the best candidate")
	var status, lastErr string
	require.NoError(t, s.db.QueryRow(`SELECT status, last_error FROM scheduler_job WHERE job_id = ?`, bad.ID.String()).Scan(&status, &lastErr))
	assert.Equal(t, "FAILED", status)
	assert.Contains(t, lastErr, "corrupt")
	assert.Equal(t, []uuid.UUID{good.ID}, ids(claim(t, s, "n", 1, t0, 0)))
}
