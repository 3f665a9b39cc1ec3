package oracle

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

var update = flag.Bool("update", false, "rewrite the golden statement files in testdata")

// goldenStatements are the store's statements for representative inputs,
// by golden file name.
func goldenStatements(t *testing.T) map[string]string {
	id1, id2 := dbID(uuid.MustParse("01900000-0000-7000-8000-000000000001")), dbID(uuid.MustParse("01900000-0000-7000-8000-000000000002"))
	ids := [][]byte{id1, id2}
	uids := []uuid.UUID{uuid.UUID(id1), uuid.UUID(id2)}
	j := &spi.Job{ID: uuid.UUID(id1), ScheduledAt: t0}
	insert, _, err := dialect.InsertJobsSQL([]*spi.Job{j, j})
	require.NoError(t, err)
	q := func(s string, _ []any) string { return s }
	m := map[string]string{
		"insert_jobs_2":         insert,
		"empty_payloads_2":      q(emptyBlobsSQL("payload", ids)),
		"insert_tags_2":         q(dialect.InsertTagsSQL([]sqlcore.JobTag{{ID: uuid.UUID(id1), Tag: "a"}, {ID: uuid.UUID(id1), Tag: "b"}})),
		"existing_keys_2":       q(dialect.ExistingKeysSQL([]string{"k1", "k2"})),
		"get_job":               q(dialect.GetJobSQL(uuid.UUID(id1))),
		"list_jobs":             q(dialect.ListJobsSQL(spi.ListParams{After: uuid.UUID(id1), Status: ""}, 11)),
		"list_jobs_failed":      q(dialect.ListJobsSQL(spi.ListParams{After: uuid.UUID(id1), Status: spi.StatusFailed}, 11)),
		"list_jobs_filtered":    q(dialect.ListJobsSQL(spi.ListParams{Status: spi.StatusPending, TaskName: "t", CreatedFrom: t0, CreatedBefore: t0.Add(time.Hour), PropertyKey: "k", PropertyValue: "v"}, 10)),
		"count_jobs_filtered":   q(dialect.CountJobsSQL(spi.ListParams{Status: spi.StatusPending, TaskName: "t", PropertyKey: "k", PropertyValue: "v"}, 10001)),
		"claim_candidates":      q(dialect.CandidatesSQL([]string{"t"}, spi.TagFilter{}, t0, 10)),
		"claim_candidates_tags": q(dialect.CandidatesSQL([]string{"t", "u"}, spi.TagFilter{All: []string{"a", "b"}, Any: []string{"c"}, None: []string{"d"}}, t0, 10)),
		"claim_lock_2":          q(lockCandidatesSQL(ids)),
		"claim_lock_resource":   q(lockResourceSQL("gpu")),
		"claim_insert_resource": q(insertResourceSQL("gpu")),
		"claim_count_holders_2": q(countHoldersSQL([]string{"api", "gpu"})),
		"claim_update_2":        q(dialect.ClaimSQL("node-a", t0, uids)),
		"jobs_2":                q(dialect.JobsSQL(uids)),
		"pending_tasks":         pendingTasksSQL,
		"claim_adopt_2":         q(dialect.AdoptSQL(t0, uids)),
		"claim_fail_corrupt":    q(dialect.FailCorruptSQL(t0, "bad", id1, 1)),
		"claim_fail_pending":    q(dialect.FailCorruptSQL(t0, "bad", id1, -1)),
		"lock_running_2":        q(dialect.RunningSQL(uids, true)),
		"complete_3": q(completeSQL([]spi.Completion{
			{ClaimRef: spi.ClaimRef{JobID: uuid.UUID(id1), ClaimSeq: 1}, Outcome: spi.OutcomeSucceeded, FinishedAt: t0, Result: []byte("1")},
			{ClaimRef: spi.ClaimRef{JobID: uuid.UUID(id2), ClaimSeq: 1}, Outcome: spi.OutcomeRetry, RetryAt: t0, Attempts: 1},
			{ClaimRef: spi.ClaimRef{JobID: uuid.UUID(id2), ClaimSeq: 1}, Outcome: spi.OutcomeFailed, FinishedAt: t0, Attempts: 2},
		})),
		"release_2":             q(dialect.ReleaseSQL(t0, uids)),
		"check_claims_2":        q(dialect.RunningSQL(uids, false)),
		"retry_failed":          q(dialect.RetryFailedSQL(uuid.UUID(id1), t0)),
		"cancel":                q(dialect.CancelSQL(uuid.UUID(id1), t0)),
		"status":                q(dialect.StatusSQL(uuid.UUID(id1))),
		"deregister":            q(dialect.DeregisterSQL("n")),
		"orphans":               q(dialect.OrphansSQL(t0, nil)),
		"orphans_nodes_2":       q(dialect.OrphansSQL(t0, []string{"a", "b"})),
		"requeue_2":             q(dialect.RequeueSQL(t0, ids)),
		"bury_crashed_2":        q(dialect.BurySQL(t0, "crashed", ids)),
		"delete_nodes_2":        q(dialect.DeleteNodesSQL(t0, []string{"a", "b"})),
		"lease_owner":           q(dialect.LeaseOwnerSQL("l")),
		"release_lease":         q(dialect.ReleaseLeaseSQL("l", "o")),
		"job_fence":             q(dialect.JobFenceSQL(uuid.UUID(id1))),
		"get_state":             q(dialect.GetStateSQL(uuid.UUID(id1), "ns")),
		"init_state":            q(dialect.InitStateSQL(uuid.UUID(id1), "ns", []byte("{}"))),
		"update_state":          q(dialect.UpdateStateSQL(uuid.UUID(id1), "ns", []byte("{}"), 3)),
		"get_property":          q(dialect.GetPropertySQL(uuid.UUID(id1), "k")),
		"put_property":          q(dialect.PutPropertySQL(uuid.UUID(id1), "k", "v")),
		"properties_by_prefix":  q(propertiesByPrefixSQL(id1, "a.")),
		"properties_all":        q(propertiesByPrefixSQL(id1, "")),
		"find_by_property":      q(dialect.FindByPropertySQL("k", "v", 0)),
		"find_by_property_top":  q(dialect.FindByPropertySQL("k", "v", 5)),
		"find_by_property_null": q(dialect.FindByPropertySQL("k", "", 5)),
		"read_schema":           schema.ListSQL,
	}
	for name, s := range dialect.Syntax.Statements() {
		m[name] = s
	}
	return m
}

// TestGoldenStatements compares every statement with its reviewed text in
// testdata/golden (go test -update rewrites them).
func TestGoldenStatements(t *testing.T) {
	for name, q := range goldenStatements(t) {
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

// TestBindsMatchPlaceholders checks, for every statement builder, that the
// binds it returns match its placeholders one to one and in order.
func TestBindsMatchPlaceholders(t *testing.T) {
	id := dbID(newID())
	ids := [][]byte{id, dbID(newID()), dbID(newID())}
	j := job(spi.PriorityHigh, t0)
	j.Params, j.LastError, j.Result = map[string]string{"a": "b"}, strings.Repeat("e", 5000), []byte{}
	insert, insertArgs, err := dialect.InsertJobsSQL([]*spi.Job{j, job(spi.PriorityLow, t0)})
	require.NoError(t, err)
	assert.Len(t, insertArgs, 2*23)
	for name, c := range map[string]struct {
		q    string
		args []any
	}{
		"insert": {insert, insertArgs},
	} {
		t.Run(name, func(t *testing.T) { checkParams(t, c.q, len(c.args)) })
	}
	for name, build := range map[string]func() (string, []any){
		"candidates": func() (string, []any) {
			return dialect.CandidatesSQL([]string{"t", "u"}, spi.TagFilter{All: []string{"a", "a", "b"}, Any: []string{"c"}, None: []string{"d", "e"}}, t0, 7)
		},
		"count":   func() (string, []any) { return countHoldersSQL([]string{"a", "b", "c"}) },
		"claim":   func() (string, []any) { return dialect.ClaimSQL("n", t0, []uuid.UUID{newID(), newID()}) },
		"adopt":   func() (string, []any) { return dialect.AdoptSQL(t0, []uuid.UUID{newID()}) },
		"corrupt": func() (string, []any) { return dialect.FailCorruptSQL(t0, "x", id, 2) },
		"release": func() (string, []any) { return dialect.ReleaseSQL(t0, []uuid.UUID{newID(), newID()}) },
		"running": func() (string, []any) { return dialect.RunningSQL([]uuid.UUID{newID(), newID()}, true) },
		"init":    func() (string, []any) { return dialect.InitStateSQL(uuid.UUID(id), "ns", []byte("{}")) },
		"put":     func() (string, []any) { return dialect.PutPropertySQL(uuid.UUID(id), "k", "v") },
		"orphans": func() (string, []any) { return dialect.OrphansSQL(t0, []string{"a", "b"}) },
		"requeue": func() (string, []any) { return dialect.RequeueSQL(t0, ids) },
		"bury":    func() (string, []any) { return dialect.BurySQL(t0, "x", ids) },
		"delete":  func() (string, []any) { return dialect.DeleteNodesSQL(t0, []string{"a"}) },
		"state":   func() (string, []any) { return dialect.GetStateSQL(uuid.UUID(id), "ns") },
		"update":  func() (string, []any) { return dialect.UpdateStateSQL(uuid.UUID(id), "ns", []byte("{}"), 1) },
		"prefix":  func() (string, []any) { return propertiesByPrefixSQL(id, "a") },
		"find":    func() (string, []any) { return dialect.FindByPropertySQL("k", "v", 3) },
		"complete": func() (string, []any) {
			return completeSQL([]spi.Completion{
				{ClaimRef: spi.ClaimRef{JobID: newID(), ClaimSeq: 1}, Outcome: spi.OutcomeSucceeded, FinishedAt: t0, Result: []byte{}},
				{ClaimRef: spi.ClaimRef{JobID: newID(), ClaimSeq: 1}, Outcome: spi.OutcomeSucceeded, FinishedAt: t0},
				{ClaimRef: spi.ClaimRef{JobID: newID(), ClaimSeq: 1}, Outcome: spi.OutcomeRetry, RetryAt: t0},
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			q, args := build()
			checkParams(t, q, len(args))
		})
	}
}

func TestStatementShapes(t *testing.T) {
	q, args := dialect.CandidatesSQL([]string{"t"}, spi.TagFilter{}, t0, 10)
	assert.Equal(t, 5, strings.Count(q, "FETCH FIRST"))
	assert.Equal(t, 5, strings.Count(q, "ORDER BY x.scheduled_time, x.job_id"))
	assert.Equal(t, 5, strings.Count(q, "x.status = 'PENDING'"))
	assert.Equal(t, 4, strings.Count(q, "UNION ALL"))
	assert.NotContains(t, q, "FOR UPDATE")
	assert.Less(t, strings.Index(q, "x.priority = 4"), strings.Index(q, "x.priority = 0"))
	assert.Len(t, args, 20)
	assert.Equal(t, 5, strings.Count(q, "NOT EXISTS (SELECT 1 FROM scheduler_task_pause p WHERE p.task_name = :"), "each level passes over a paused task")
	// IN lists stay under Oracle's 1,000 expressions.
	assert.LessOrEqual(t, idsPerList, 1000)
	assert.LessOrEqual(t, tagsPerInsert*2, 1000)
	// Status values are literals.
	for name, q := range goldenStatements(t) {
		assert.NotRegexp(t, `status = :`, q, "statement %s binds a status", name)
		if !strings.HasPrefix(q, "BEGIN") {
			assert.NotRegexp(t, `;\s*$`, q, "statement %s ends with a semicolon (ORA-00933/00911)", name)
		}
	}
	// Long text and large payloads go through temporary LOBs.
	assert.IsType(t, "", clobArg(strings.Repeat("é", 2000)))
	assert.NotEqual(t, "string", typeName(clobArg(strings.Repeat("é", 2001))))
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	}
	return "other"
}

func TestSplitStatements(t *testing.T) {
	// The real files: every statement is a CREATE, the PL/SQL block or the
	// version insert, and none keeps a trailing semicolon.
	migs, err := ddl.Migrations(Dialect)
	require.NoError(t, err)
	var all []string
	for _, m := range migs {
		all = append(all, sqlcore.SplitStatements(m.SQL)...)
	}
	assert.Len(t, all, 10+8+3+2+3+9+4+6+4+4+3+3+3+3+2+2+4+2+2)
	for _, s := range all {
		switch {
		case strings.HasPrefix(s, "BEGIN"):
			assert.True(t, strings.HasSuffix(s, "END;"), s)
		case strings.HasPrefix(s, "CREATE "), strings.HasPrefix(s, "DROP INDEX IF EXISTS "), strings.HasPrefix(s, "INSERT INTO ratchet_schema_version"):
			assert.False(t, strings.HasSuffix(s, ";"), s)
		default:
			t.Errorf("unexpected statement %q", s)
		}
	}
}

func TestTimeBinds(t *testing.T) {
	in := time.Date(2026, 11, 29, 13, 14, 15, 123456789, time.FixedZone("CET", 3600))
	got := time.Time(dbTime(in))
	assert.Equal(t, time.UTC, got.Location())
	assert.True(t, got.Equal(time.Date(2026, 11, 29, 12, 14, 15, 123456000, time.UTC)), "UTC, truncated to the microsecond")
	assert.Nil(t, nullDBTime(time.Time{}))
}
