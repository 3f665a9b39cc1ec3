package sqlserver

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

var update = flag.Bool("update", false, "rewrite the golden statement files in testdata")

// goldenStatements are the store's statements for representative shapes,
// by golden file name.
func goldenStatements() map[string]string {
	m := map[string]string{
		"insert_jobs_2":         insertText(2),
		"insert_tags_3":         text(dialect.InsertTagsSQL(make([]sqlcore.JobTag, 3))),
		"existing_keys_2":       text(dialect.ExistingKeysSQL([]string{"a", "b"})),
		"get_job":               text(dialect.GetJobSQL(uuid.Nil)),
		"list_jobs":             text(dialect.ListJobsSQL(spi.ListParams{After: uuid.Nil, Status: ""}, 10)),
		"list_jobs_failed":      text(dialect.ListJobsSQL(spi.ListParams{After: uuid.Nil, Status: spi.StatusFailed}, 10)),
		"list_jobs_filtered":    text(dialect.ListJobsSQL(spi.ListParams{Status: spi.StatusPending, TaskName: "t", CreatedFrom: t0, CreatedBefore: t0.Add(time.Hour), PropertyKey: "k", PropertyValue: "v"}, 10)),
		"count_jobs_filtered":   text(dialect.CountJobsSQL(spi.ListParams{Status: spi.StatusPending, TaskName: "t", PropertyKey: "k", PropertyValue: "v"}, 10001)),
		"claim_candidates":      text(dialect.CandidatesSQL([]string{"t"}, spi.TagFilter{}, t0, 10)),
		"claim_candidates_tags": text(dialect.CandidatesSQL([]string{"t", "u"}, spi.TagFilter{All: []string{"a", "b"}, Any: []string{"c"}, None: []string{"d"}}, t0, 10)),
		"claim_permits_2":       permitsSQL(2),
		"claim_update_2":        claimSQL(2),
		"claim_adopt_2":         text(dialect.AdoptSQL(t0, make([]uuid.UUID, 2))),
		"claim_fail_corrupt":    text(dialect.FailCorruptSQL(t0, "x", nil, 1)),
		"claim_fail_pending":    text(dialect.FailCorruptSQL(t0, "x", nil, -1)),
		"complete_2":            completeSQL(2),
		"release_2":             text(dialect.ReleaseSQL(t0, make([]uuid.UUID, 2))),
		"running_2":             text(dialect.RunningSQL(make([]uuid.UUID, 2), true)),
		"retry_failed":          text(dialect.RetryFailedSQL(uuid.Nil, t0)),
		"cancel":                text(dialect.CancelSQL(uuid.Nil, t0)),
		"status":                text(dialect.StatusSQL(uuid.Nil)),
		"deregister":            text(dialect.DeregisterSQL("n")),
		"orphans":               text(dialect.OrphansSQL(t0, nil)),
		"orphans_nodes_2":       text(dialect.OrphansSQL(t0, []string{"a", "b"})),
		"requeue_2":             text(dialect.RequeueSQL(t0, make([][]byte, 2))),
		"bury_2":                text(dialect.BurySQL(t0, "x", make([][]byte, 2))),
		"delete_nodes_2":        text(dialect.DeleteNodesSQL(t0, []string{"a", "b"})),
		"release_lease":         text(dialect.ReleaseLeaseSQL("l", "o")),
		"job_fence":             text(dialect.JobFenceSQL(uuid.Nil)),
		"get_state":             text(dialect.GetStateSQL(uuid.Nil, "ns")),
		"init_state":            text(dialect.InitStateSQL(uuid.Nil, "ns", nil)),
		"update_state":          text(dialect.UpdateStateSQL(uuid.Nil, "ns", nil, 0)),
		"put_property":          text(dialect.PutPropertySQL(uuid.Nil, "k", "v")),
		"get_property":          text(dialect.GetPropertySQL(uuid.Nil, "k")),
		"properties_by_prefix":  propertiesByPrefixSQL,
		"find_by_property":      text(dialect.FindByPropertySQL("k", "v", 0)),
		"find_by_property_top":  text(dialect.FindByPropertySQL("k", "v", 5)),
		"read_schema":           schema.ListSQL,
		"migrate_lock":          migrateLockSQL,
		"pending_tasks":         pendingTasksSQL,
	}
	for name, q := range dialect.Syntax.Statements() {
		m[name] = q
	}
	return m
}

// text is the text of a statement.
func text(q string, _ []any) string { return q }

// insertText is the text of the insert of n jobs.
func insertText(n int) string {
	jobs := make([]*spi.Job, n)
	for i := range jobs {
		jobs[i] = job(spi.PriorityNormal, t0)
	}
	q, _, err := dialect.InsertJobsSQL(jobs)
	if err != nil {
		panic(err)
	}
	return q
}

// numInsertArgs is the number of parameters of one inserted row.
const numInsertArgs = 23

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
	assert.LessOrEqual(t, maxParam(insertText(rowsPerInsert)), maxParams)
	assert.LessOrEqual(t, maxParam(text(dialect.InsertTagsSQL(make([]sqlcore.JobTag, tagsPerInsert)))), maxParams)
	assert.LessOrEqual(t, maxParam(text(dialect.ExistingKeysSQL(make([]string, keysPerLookup)))), maxParams)
	assert.LessOrEqual(t, maxParam(completeSQL(rowsPerComplet)), maxParams)
	assert.LessOrEqual(t, maxParam(text(dialect.ReleaseSQL(t0, make([]uuid.UUID, dialect.MaxIDs)))), maxParams)
	assert.LessOrEqual(t, maxParam(text(dialect.RunningSQL(make([]uuid.UUID, dialect.MaxIDs), true))), maxParams)
	assert.LessOrEqual(t, maxParam(text(dialect.BurySQL(t0, "x", make([][]byte, dialect.MaxIDs)))), maxParams)
	assert.Equal(t, rowsPerInsert*numInsertArgs, maxParam(insertText(rowsPerInsert)))
	assert.Equal(t, 5*numCompleteArgs, maxParam(completeSQL(5)))
	// ...and under 1,000 rows per VALUES list.
	for _, n := range []int{rowsPerInsert, tagsPerInsert, rowsPerComplet} {
		assert.LessOrEqual(t, n, 1000)
	}

	// The claim: five TOP-N scans of PENDING jobs, one per level, in the
	// order CRITICAL..LOWEST, each with the skip-locked hints and the
	// index order.
	q, _ := dialect.CandidatesSQL([]string{"t"}, spi.TagFilter{}, t0, 10)
	assert.Equal(t, 5, strings.Count(q, "SELECT TOP (@p"))
	assert.Equal(t, 5, strings.Count(q, "WITH (UPDLOCK, READPAST, ROWLOCK)"))
	assert.Equal(t, 5, strings.Count(q, "ORDER BY x.scheduled_time, x.job_id"))
	assert.Equal(t, 5, strings.Count(q, "x.status = 'PENDING'"), "a literal status, so the filtered index matches")
	assert.Equal(t, 4, strings.Count(q, "UNION ALL"))
	for lvl := range spi.NumPriorities {
		assert.Contains(t, q, "x.priority = "+strconv.Itoa(lvl))
	}
	assert.Less(t, strings.Index(q, "x.priority = 4"), strings.Index(q, "x.priority = 0"))
	assert.Equal(t, 20, maxParam(q), "per level: the limit, the task, now and the task again (the paused tasks' probe)")
	assert.Equal(t, 5, strings.Count(q, "NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = @p"), "each level passes over a paused task")

	// Tag lists are parameters, tested as counts on the tag table's key.
	q, _ = dialect.CandidatesSQL([]string{"t"}, spi.TagFilter{All: []string{"a", "b", "a"}, Any: []string{"c", "d", "e"}, None: []string{"f"}}, t0, 10)
	assert.Contains(t, q, "t.tag IN (@p5, @p6)) = 2")
	assert.Contains(t, q, "AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p7, @p8, @p9)) > 0")
	assert.Contains(t, q, "AND (SELECT COUNT(*) FROM scheduler_job_tag t WHERE t.job_id = x.job_id AND t.tag IN (@p10)) = 0")
	assert.Equal(t, 5*10, maxParam(q))

	// Permits: one lock per resource, then the count.
	q = permitsSQL(3)
	assert.Equal(t, 3, strings.Count(q, "EXEC @rc = sp_getapplock"))
	assert.Less(t, strings.LastIndex(q, "sp_getapplock"), strings.Index(q, "SELECT r.n"), "the count runs after every lock is granted")
	assert.Equal(t, 7, maxParam(q))

	// Status values are literals everywhere.
	for name, q := range goldenStatements() {
		assert.NotRegexp(t, `status = @p`, q, "statement %s compares status with a parameter", name)
	}
	assert.Contains(t, text(dialect.ListJobsSQL(spi.ListParams{After: uuid.Nil, Status: spi.StatusFailed}, 10)), "j.status = 'FAILED'")
	assert.NotContains(t, text(dialect.ListJobsSQL(spi.ListParams{After: uuid.Nil, Status: ""}, 10)), "j.status =")
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
