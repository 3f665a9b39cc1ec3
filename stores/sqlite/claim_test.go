package sqlite

import (
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
		assert.Equal(t, tasks*spi.NumPriorities, strings.Count(text, "USING INDEX idx_scheduler_job_claim (status=? AND task_name=? AND priority=? AND scheduled_time<?)"), "shape %d:\n%s", shape, text)
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
	assert.NotRegexp(t, `SCAN scheduler_job( |$)`, text, "the pending tasks are read by index seeks")
	assert.NotContains(t, text, "TEMP B-TREE", text)
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
