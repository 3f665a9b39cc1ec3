package sqlserver

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var update = flag.Bool("update", false, "rewrite the golden statement files in testdata")

// goldenStatements are the store's statements for representative shapes,
// by golden file name.
func goldenStatements() map[string]string {
	return map[string]string{
		"insert_jobs_2":         insertJobsSQL(2),
		"insert_tags_3":         insertTagsSQL(3),
		"existing_keys_2":       existingKeysSQL(2),
		"get_job":               getJobSQL,
		"list_jobs":             listJobsSQL(""),
		"list_jobs_failed":      listJobsSQL(spi.StatusFailed),
		"claim_candidates":      claimCandidatesSQL(tagShape{}),
		"claim_candidates_tags": claimCandidatesSQL(tagShape{all: 2, any: 1, none: 1}),
		"claim_permits_2":       permitsSQL(2),
		"claim_update_2":        claimSQL(2),
		"claim_adopt_2":         adoptSQL(2),
		"claim_fail_corrupt":    failCorruptClaimedSQL,
		"claim_fail_pending":    failCorruptPendingSQL,
		"complete_2":            completeSQL(2),
		"release_2":             releaseSQL(2),
		"running_2":             runningSQL(2, true),
		"retry_failed":          retryFailedSQL,
		"cancel":                cancelSQL,
		"status":                statusSQL,
		"heartbeat":             heartbeatSQL,
		"deregister":            deregisterSQL,
		"orphans":               orphansSQL(0),
		"orphans_nodes_2":       orphansSQL(2),
		"requeue_2":             requeueSQL(2),
		"bury_2":                burySQL(2),
		"delete_nodes_2":        deleteNodesSQL(2),
		"acquire_lease":         acquireLeaseSQL,
		"release_lease":         releaseLeaseSQL,
		"job_fence":             jobFenceSQL,
		"get_state":             getStateSQL,
		"init_state":            initStateSQL,
		"update_state":          updateStateSQL,
		"put_property":          putPropertySQL,
		"get_property":          getPropertySQL,
		"properties_by_prefix":  propertiesByPrefixSQL,
		"find_by_property":      findByPropertySQL(false),
		"find_by_property_top":  findByPropertySQL(true),
		"read_schema":           schema.ListSQL,
		"migrate_lock":          migrateLockSQL,
		"pending_tasks":         pendingTasksSQL,
	}
}

// TestGoldenStatements compares every statement with its reviewed text in
// testdata/golden (go test -update rewrites them).
func TestGoldenStatements(t *testing.T) {
	for name, q := range goldenStatements() {
		path := filepath.Join("testdata", "golden", name+".sql")
		if *update {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, []byte(q+"\n"), 0o644))
			continue
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "golden file of %s (run go test -update)", name)
		assert.Equal(t, strings.TrimSuffix(string(want), "\n"), q, "statement %s differs from %s", name, path)
	}
}

var paramNum = regexp.MustCompile(`@p([0-9]+)\b`)

// maxParam returns the highest @pN of q.
func maxParam(q string) int {
	n := 0
	for _, m := range paramNum.FindAllStringSubmatch(q, -1) {
		i, _ := strconv.Atoi(m[1])
		n = max(n, i)
	}
	return n
}

func TestStatementShapes(t *testing.T) {
	// Batches stay under SQL Server's 2,100 parameters.
	assert.LessOrEqual(t, maxParam(insertJobsSQL(rowsPerInsert)), maxParams)
	assert.LessOrEqual(t, maxParam(insertTagsSQL(tagsPerInsert)), maxParams)
	assert.LessOrEqual(t, maxParam(existingKeysSQL(keysPerLookup)), maxParams)
	assert.LessOrEqual(t, maxParam(completeSQL(rowsPerComplet)), maxParams)
	assert.LessOrEqual(t, maxParam(releaseSQL(dialect.MaxIDs)), maxParams)
	assert.LessOrEqual(t, maxParam(runningSQL(dialect.MaxIDs, true)), maxParams)
	assert.LessOrEqual(t, maxParam(burySQL(dialect.MaxIDs)), maxParams)
	assert.Equal(t, rowsPerInsert*numInsertArgs, maxParam(insertJobsSQL(rowsPerInsert)))
	assert.Equal(t, 5*numCompleteArgs, maxParam(completeSQL(5)))
	// ...and under 1,000 rows per VALUES list.
	for _, n := range []int{rowsPerInsert, tagsPerInsert, rowsPerComplet} {
		assert.LessOrEqual(t, n, 1000)
	}

	// The claim: five TOP-N scans of PENDING jobs, one per level, in the
	// order CRITICAL..LOWEST, each with the skip-locked hints and the
	// index order.
	q := claimCandidatesSQL(tagShape{})
	assert.Equal(t, 5, strings.Count(q, "SELECT TOP (@p2)"))
	assert.Equal(t, 5, strings.Count(q, "WITH (UPDLOCK, READPAST, ROWLOCK)"))
	assert.Equal(t, 5, strings.Count(q, "ORDER BY x.scheduled_time, x.job_id"))
	assert.Equal(t, 5, strings.Count(q, "x.status = 'PENDING'"), "a literal status, so the filtered index matches")
	assert.Equal(t, 4, strings.Count(q, "UNION ALL"))
	for lvl := range spi.NumPriorities {
		assert.Contains(t, q, "x.priority = "+strconv.Itoa(lvl))
	}
	assert.Less(t, strings.Index(q, "x.priority = 4"), strings.Index(q, "x.priority = 0"))
	assert.Equal(t, 3, maxParam(q))
	// Per level, one range of the task-led index per task of the JSON
	// array @p3, typed as the column so that the seek needs no conversion.
	assert.Equal(t, 5, strings.Count(q, "FROM OPENJSON(@p3) WITH (name NVARCHAR(255) '$') AS t CROSS APPLY ("))
	assert.Equal(t, 5, strings.Count(q, "x.task_name = t.name AND x.priority = "))

	// Tag lists are parameters: All's tags and count, then Any, then None.
	q = claimCandidatesSQL(tagShape{all: 2, any: 3, none: 1})
	assert.Contains(t, q, "t.tag IN (@p4, @p5)) = @p6")
	assert.Contains(t, q, "AND EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p7, @p8, @p9))")
	assert.Contains(t, q, "AND NOT EXISTS (SELECT 1 FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p10))")
	assert.Equal(t, 10, maxParam(q))

	// Permits: one lock per resource, then the count.
	q = permitsSQL(3)
	assert.Equal(t, 3, strings.Count(q, "EXEC @rc = sp_getapplock"))
	assert.Less(t, strings.LastIndex(q, "sp_getapplock"), strings.Index(q, "SELECT r.n"), "the count runs after every lock is granted")
	assert.Equal(t, 7, maxParam(q))

	// Status values are literals everywhere.
	for name, q := range goldenStatements() {
		assert.NotRegexp(t, `status = @p`, q, "statement %s compares status with a parameter", name)
	}
	assert.Contains(t, listJobsSQL(spi.StatusFailed), "j.status = 'FAILED'")
	assert.NotContains(t, listJobsSQL(""), "j.status =")
}

func TestSplitBatches(t *testing.T) {
	got := splitBatches("-- header\nCREATE TABLE a (x INT);\nGO\n  go  \n-- only a comment\nGO\nALTER TABLE a ADD y INT;\r\nGO\r\nCREATE INDEX i ON a (y);\nINSERT INTO v VALUES (1);\n")
	assert.Equal(t, []string{
		"-- header\nCREATE TABLE a (x INT);",
		"ALTER TABLE a ADD y INT;",
		"CREATE INDEX i ON a (y);\nINSERT INTO v VALUES (1);",
	}, got)
	assert.Equal(t, []string{"SELECT 'GOOD' AS go_on"}, splitBatches("SELECT 'GOOD' AS go_on"), "GO only counts alone on a line")
}
