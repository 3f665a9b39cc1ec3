package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// versions returns the recorded schema versions of schema.
func versions(t *testing.T, s *Store) []int {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), `SELECT version FROM `+qualify(s.schema, sqlcore.VersionTable)+` ORDER BY version`)
	require.NoError(t, err)
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	require.NoError(t, err)
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = int(v)
	}
	return out
}

// tablesOf lists the tables of schema.
func tablesOf(t *testing.T, dsn, schema string) []string {
	t.Helper()
	p := rawPool(t, dsn)
	rows, err := p.Query(context.Background(), `SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, schema)
	require.NoError(t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return names
}

func TestOpenAppliesMigrations(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	s := openSchema(t, dsn, schema)
	assert.Equal(t, schema, s.Schema())
	assert.Equal(t, []string{"ratchet_schema_version", "scheduler_audit", "scheduler_batch", "scheduler_job", "scheduler_job_archive", "scheduler_job_archive_property",
		"scheduler_job_archive_state", "scheduler_job_archive_tag", "scheduler_job_attempt", "scheduler_job_dep", "scheduler_job_log", "scheduler_job_property", "scheduler_job_signal", "scheduler_job_state",
		"scheduler_job_tag", "scheduler_job_unique", "scheduler_lease", "scheduler_node", "scheduler_rate_start", "scheduler_schedule", "scheduler_schedule_skip", "scheduler_stats_sample", "scheduler_task_pause"}, tablesOf(t, dsn, schema))
	latest := ddl.Latest(Dialect)
	require.Equal(t, 20, latest)
	assert.Equal(t, ddl.Versions(Dialect), versions(t, s))

	// Re-applying is a no-op, and so is opening again with or without
	// migrations.
	applied, err := Migrate(ctx, s.Pool(), schema)
	require.NoError(t, err)
	assert.Empty(t, applied)
	s2 := openSchema(t, dsn, schema)
	s3, err := Open(ctx, dsn, Options{Schema: schema})
	require.NoError(t, err)
	require.NoError(t, s3.Close())
	assert.Equal(t, ddl.Versions(Dialect), versions(t, s2))

	// The indexes of the DDL are there.
	rows, err := s.pool.Query(ctx, `SELECT indexname::text FROM pg_indexes WHERE schemaname = $1 ORDER BY 1`, schema)
	require.NoError(t, err)
	idx, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	for _, want := range []string{"idx_scheduler_job_claim", "idx_scheduler_job_owner", "idx_scheduler_job_tag_tag", "uq_scheduler_job_idempotency_key",
		"idx_scheduler_job_resource", "idx_scheduler_job_property_value", "scheduler_lease_pkey", "scheduler_job_state_pkey", "scheduler_job_property_pkey"} {
		assert.Contains(t, idx, want)
	}

	// The job table leaves room on its pages for the claim's and the
	// completion's row versions (0013_fillfactor.sql); the archive does
	// not.
	var jobOpts, archiveOpts []string
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = $1::regclass`,
		qualify(schema, "scheduler_job")).Scan(&jobOpts))
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = $1::regclass`,
		qualify(schema, "scheduler_job_archive")).Scan(&archiveOpts))
	assert.Equal(t, []string{"fillfactor=50"}, jobOpts)
	assert.Empty(t, archiveOpts)
}

func TestMigrateFreshSchemaReturnsApplied(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	pool := rawPool(t, dsn)
	applied, err := Migrate(ctx, pool, schema)
	require.NoError(t, err)
	assert.Equal(t, ddl.Versions(Dialect), applied)
	applied, err = Migrate(ctx, pool, schema)
	require.NoError(t, err)
	assert.Equal(t, []int{}, applied)
	_, err = Migrate(ctx, nil, schema)
	require.Error(t, err)
	_, err = Migrate(ctx, pool, strings.Repeat("x", 64))
	require.ErrorContains(t, err, "longer than 63 bytes")
}

func TestOpenCreatesMissingSchemaOnlyWithApplyMigrations(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	pool := rawPool(t, dsn)
	_, err := pool.Exec(ctx, `DROP SCHEMA `+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)

	_, err = Open(ctx, dsn, Options{Schema: schema})
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), "does not exist")
	assert.Contains(t, err.Error(), schema)
	assert.Empty(t, tablesOf(t, dsn, schema))
	var exists bool
	require.NoError(t, pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists))
	assert.False(t, exists, "a store without ApplyMigrations must not create the schema")

	s := openSchema(t, dsn, schema)
	assert.Equal(t, ddl.Versions(Dialect), versions(t, s))
}

func TestOpenWithoutMigrationsOnEmptySchema(t *testing.T) {
	dsn, schema := testDB(t)
	_, err := Open(context.Background(), dsn, Options{Schema: schema})
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), "no Ratchet tables")
	assert.Contains(t, err.Error(), "ApplyMigrations")
	assert.Empty(t, tablesOf(t, dsn, schema), "the check must write nothing")
}

func TestOpenLeavesOtherTablesAlone(t *testing.T) {
	// An application's own tables in the schema are no obstacle.
	ctx := context.Background()
	dsn, schema := testDB(t)
	pool := rawPool(t, dsn)
	_, err := pool.Exec(ctx, `CREATE TABLE `+qualify(schema, "customers")+` (id int PRIMARY KEY)`)
	require.NoError(t, err)
	openSchema(t, dsn, schema)
	assert.Contains(t, tablesOf(t, dsn, schema), "customers")
}

// A schema newer than the code whose later migrations are all marked
// compatible opens, with or without migrations, and says so; one more
// migration not marked makes it refuse, naming it.
func TestOpenAcceptsACompatibleNewerSchema(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	s := openSchema(t, dsn, schema)
	latest := ddl.Latest(Dialect)
	assert.Empty(t, s.SchemaWarning(), "at the code's own version")
	exec(t, s, `INSERT INTO `+qualify(schema, sqlcore.VersionTable)+` (version, compatible) VALUES ($1, 1)`, latest+1)
	for _, apply := range []bool{false, true} {
		s2, err := Open(ctx, dsn, Options{Schema: schema, ApplyMigrations: apply})
		require.NoError(t, err, "ApplyMigrations %v", apply)
		assert.Equal(t, fmt.Sprintf("schema %q is at version %d, newer than version %d of this code; every version after %d is marked compatible, so this code works with it: upgrade Ratchet",
			schema, latest+1, latest, latest), s2.SchemaWarning())
		require.NoError(t, s2.Close())
	}
	exec(t, s, `INSERT INTO `+qualify(schema, sqlcore.VersionTable)+` (version) VALUES ($1)`, latest+2)
	_, err := Open(ctx, dsn, Options{Schema: schema})
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), fmt.Sprintf("is at version %d, newer than version %d, the latest this code knows, and version %d is not marked compatible", latest+2, latest, latest+2))
}

func TestOpenRejectsNewerSchema(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	s := openSchema(t, dsn, schema)
	exec(t, s, `INSERT INTO `+qualify(schema, sqlcore.VersionTable)+` (version) VALUES (99)`)
	for _, apply := range []bool{false, true} {
		_, err := Open(ctx, dsn, Options{Schema: schema, ApplyMigrations: apply})
		require.ErrorIs(t, err, spi.ErrSchema, "ApplyMigrations %v", apply)
		assert.Contains(t, err.Error(), "version 99")
		assert.Contains(t, err.Error(), fmt.Sprintf("newer than version %d", ddl.Latest(Dialect)))
		assert.Contains(t, err.Error(), "version 99 is not marked compatible")
	}
	applied, err := Migrate(ctx, s.Pool(), schema)
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Empty(t, applied)
	assert.Equal(t, append(ddl.Versions(Dialect), 99), versions(t, s))
}

func TestOpenRejectsPartialSchema(t *testing.T) {
	cases := []struct {
		name, damage, want string
	}{
		{"no version table", `DROP TABLE {s}.ratchet_schema_version`, "but no ratchet_schema_version table"},
		{"empty version table", `DELETE FROM {s}.ratchet_schema_version`, "empty ratchet_schema_version"},
		{"a table dropped", `DROP TABLE {s}.scheduler_node`, "lacks the tables scheduler_node"},
		{"two tables dropped", `DROP TABLE {s}.scheduler_job CASCADE; DROP TABLE {s}.scheduler_job_tag`, "lacks the tables scheduler_job, scheduler_job_tag"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dsn, schema := testDB(t)
			pool := rawPool(t, dsn)
			_, err := Migrate(ctx, pool, schema)
			require.NoError(t, err)
			_, err = pool.Exec(ctx, strings.ReplaceAll(tc.damage, "{s}", pgx.Identifier{schema}.Sanitize()))
			require.NoError(t, err)
			before := tablesOf(t, dsn, schema)
			for _, apply := range []bool{false, true} {
				_, err := Open(ctx, dsn, Options{Schema: schema, ApplyMigrations: apply})
				require.ErrorIs(t, err, spi.ErrSchema, "ApplyMigrations %v", apply)
				assert.Contains(t, err.Error(), tc.want)
				assert.Contains(t, err.Error(), schema)
			}
			_, err = Migrate(ctx, pool, schema)
			require.ErrorIs(t, err, spi.ErrSchema)
			assert.Equal(t, before, tablesOf(t, dsn, schema), "a refused schema must be left as it was")
		})
	}
}

func TestMigrateConcurrently(t *testing.T) {
	dsn, schema := testDB(t)
	pool := rawPool(t, dsn)
	const n = 4
	results := make([][]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { results[i], errs[i] = Migrate(context.Background(), pool, schema) })
	}
	wg.Wait()
	total := 0
	for i := range n {
		require.NoError(t, errs[i])
		total += len(results[i])
	}
	assert.Equal(t, ddl.Latest(Dialect), total, "each migration is applied exactly once: %v", results)
	s := openSchema(t, dsn, schema)
	assert.Equal(t, ddl.Versions(Dialect), versions(t, s))
}

// TestMigrateOlderSchema brings a version-1 schema to a synthetic version
// 2, as Open does when the code ships a new migration, and checks that a
// failing migration changes nothing.
func TestMigrateOlderSchema(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	s := openSchema(t, dsn, schema)
	j := job(spi.PriorityHigh, t0)
	insert(t, s, j)

	migs, err := ddl.Migrations(Dialect)
	require.NoError(t, err)
	next := strconv.Itoa(len(migs) + 1)
	v2 := append(migs[:len(migs):len(migs)], ddl.Migration{
		Version: len(migs) + 1,
		Name:    "add_note",
		SQL: `ALTER TABLE scheduler_job ADD COLUMN note text;
			INSERT INTO ratchet_schema_version (version) VALUES (` + next + `);`,
	})
	applied, err := migrate(ctx, s.pool, schema, v2)
	require.NoError(t, err)
	assert.Equal(t, []int{len(migs) + 1}, applied)
	var note *string
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT note FROM `+qualify(schema, "scheduler_job")+` WHERE job_id = $1`, j.ID).Scan(&note))
	assert.Nil(t, note)
	applied, err = migrate(ctx, s.pool, schema, v2)
	require.NoError(t, err)
	assert.Empty(t, applied, "applying again is a no-op")

	// A migration that fails leaves the schema as it was.
	bad := append(v2[:len(v2):len(v2)], ddl.Migration{Version: len(v2) + 1, Name: "broken", SQL: `CREATE TABLE x (a int); SELECT * FROM no_such_table;`})
	_, err = migrate(ctx, s.pool, schema, bad)
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), "broken")
	assert.NotContains(t, tablesOf(t, dsn, schema), "x")

	// A migration that does not record its version is refused.
	silent := append(v2[:len(v2):len(v2)], ddl.Migration{Version: len(v2) + 1, Name: "silent", SQL: `CREATE TABLE y (a int);`})
	_, err = migrate(ctx, s.pool, schema, silent)
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), "left the recorded version at "+next)
	assert.NotContains(t, tablesOf(t, dsn, schema), "y")
}

func TestOpenOlderSchemaWithoutMigrations(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	pool := rawPool(t, dsn)
	migs, err := ddl.Migrations(Dialect)
	require.NoError(t, err)
	latest := len(migs)
	// A schema one version behind the code.
	_, err = migrate(ctx, pool, schema, migs[:latest-1])
	require.NoError(t, err)
	err = checkSchemaAt(ctx, pool, schema, latest)
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), fmt.Sprintf("is at version %d, this code needs version %d", latest-1, latest))
	assert.Contains(t, err.Error(), "apply the migrations")
	_, err = Open(ctx, dsn, Options{Schema: schema})
	require.ErrorIs(t, err, spi.ErrSchema)
	applied, err := migrate(ctx, pool, schema, migs)
	require.NoError(t, err)
	assert.Equal(t, []int{latest}, applied)
	require.NoError(t, checkSchemaAt(ctx, pool, schema, latest))
}

// TestUpgradeFromVersion1 migrates a version-1 schema that holds jobs: the
// old jobs read back without a resource and are claimed as before.
func TestUpgradeFromVersion1(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	pool := rawPool(t, dsn)
	migs, err := ddl.Migrations(Dialect)
	require.NoError(t, err)
	_, err = migrate(ctx, pool, schema, migs[:1])
	require.NoError(t, err)
	id := newID()
	_, err = pool.Exec(ctx, `INSERT INTO `+qualify(schema, "scheduler_job")+` (job_id, task_name, status, priority, scheduled_time)
		VALUES ($1, 'old', 'PENDING', 2, $2)`, id, t0)
	require.NoError(t, err)

	s := openSchema(t, dsn, schema)
	assert.Equal(t, ddl.Versions(Dialect), versions(t, s))
	j := get(t, s, id)
	assert.Empty(t, j.Resource)
	assert.Zero(t, j.ResourceLimit)
	got := claim(t, s, "n", 10, t0, 0)
	require.Len(t, got, 1)
	assert.Equal(t, id, got[0].ID)
}

func TestSchemaNameIsQuoted(t *testing.T) {
	// A schema name that needs quoting (case, spaces, quotes, non-ASCII)
	// works everywhere: migrations, statements, COPY and LISTEN.
	ctx := context.Background()
	dsn, base := testDB(t)
	schema := base + `-Mixed "Ä" x`
	pool := rawPool(t, dsn)
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
	})
	s := openSchema(t, dsn, schema)
	got := make(chan spi.Priority, 16)
	lctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	go func() { _ = s.ListenWakeups(lctx, func(h spi.WakeupHint) { got <- h.Priority }) }()
	waitListening(t, s)
	small := job(spi.PriorityHigh, t0)
	small.Tags = []string{"a"}
	small.Resource, small.ResourceLimit = "db", 1 // the claim below takes the permit path
	insert(t, s, small)
	assert.Equal(t, spi.PriorityHigh, <-got)
	var many []*spi.Job
	for range CopyThreshold {
		j := job(spi.PriorityLow, t0)
		j.Tags = []string{"b"}
		many = append(many, j)
	}
	insert(t, s, many...)
	assert.Equal(t, spi.PriorityLow, <-got)
	assert.Equal(t, small, get(t, s, small.ID))
	assert.Len(t, claim(t, s, "n", 1000, t0, 0), CopyThreshold+1)
}

func TestSchemasAreIsolated(t *testing.T) {
	dsn, a := testDB(t)
	_, b := testDB(t)
	sa := openSchema(t, dsn, a)
	sb := openSchema(t, dsn, b)
	j := job(spi.PriorityNormal, t0)
	insert(t, sa, j)
	_, err := sb.GetJob(context.Background(), j.ID)
	require.ErrorIs(t, err, spi.ErrNotFound)
	assert.Empty(t, claim(t, sb, "n", 10, t0, 0))
	assert.Len(t, claim(t, sa, "n", 10, t0, 0), 1)
	assert.NotEqual(t, sa.WakeupChannel(), sb.WakeupChannel())
}

func TestChannelName(t *testing.T) {
	assert.Equal(t, "ratchet_wakeup_public", channelName("public"))
	long := strings.Repeat("s", 63)
	c := channelName(long)
	assert.LessOrEqual(t, len(c), 63)
	assert.NotEqual(t, c, channelName(strings.Repeat("s", 62)+"t"))
	assert.Equal(t, c, channelName(long), "stable")
}

func TestOpenUnreachableFailsFast(t *testing.T) {
	start := time.Now()
	_, err := Open(context.Background(), "postgres://postgres@127.0.0.1:1/test?sslmode=disable", Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "127.0.0.1:1")
	assert.Contains(t, err.Error(), "cannot connect")
	assert.Less(t, time.Since(start), 5*time.Second)

	// With the default sslmode (prefer), pgx tries twice and reports both
	// attempts: the same dial error is said once.
	_, err = Open(context.Background(), "postgres://postgres@127.0.0.1:1/test", Options{})
	require.Error(t, err)
	assert.Equal(t, 1, strings.Count(err.Error(), "connection refused"), err.Error())
	var ce *pgconn.ConnectError
	assert.ErrorAs(t, err, &ce, "the driver's error is still there")
}

func TestOpenSilentServerTimesOut(t *testing.T) {
	// A server that accepts connections but never answers must not hang
	// Open: the connect timeout ends the attempt.
	addr := dbtest.SilentServer(t)
	start := time.Now()
	_, err := Open(context.Background(), "postgres://postgres@"+addr+"/test?sslmode=disable", Options{ConnectTimeout: 300 * time.Millisecond})
	require.Error(t, err)
	assert.Contains(t, err.Error(), addr)
	assert.Less(t, time.Since(start), 5*time.Second)

	// The DSN's connect_timeout applies when Options.ConnectTimeout is zero.
	start = time.Now()
	_, err = Open(context.Background(), "postgres://postgres@"+addr+"/test?sslmode=disable&connect_timeout=1", Options{})
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)

	// And ctx bounds it too.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = Open(ctx, "postgres://postgres@"+addr+"/test?sslmode=disable", Options{})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "error %v", err)
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestOpenMalformedDSN(t *testing.T) {
	for _, dsn := range []string{
		"postgres://postgres:s3cret@127.0.0.1:notaport/test",
		"host=127.0.0.1 port=abc password=s3cret",
		"postgres://postgres@127.0.0.1/test?sslmode=sometimes",
		"postgres://postgres@127.0.0.1/test?pool_max_conns=many",
	} {
		start := time.Now()
		_, err := Open(context.Background(), dsn, Options{})
		require.Error(t, err, dsn)
		assert.Contains(t, err.Error(), "invalid DSN", dsn)
		assert.NotContains(t, err.Error(), "s3cret", "the error must not show the password")
		assert.Less(t, time.Since(start), time.Second)
	}
	_, err := Open(context.Background(), "postgres://127.0.0.1/test", Options{ConnectTimeout: -time.Second})
	require.ErrorContains(t, err, "negative connect timeout")
	_, err = Open(context.Background(), "postgres://127.0.0.1:1/test", Options{Schema: strings.Repeat("s", 64)})
	require.Error(t, err)
}

func TestNewOnExistingPool(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	pool := rawPool(t, dsn)
	_, err := New(ctx, nil, Options{})
	require.Error(t, err)
	_, err = New(ctx, pool, Options{Schema: schema})
	require.ErrorIs(t, err, spi.ErrSchema, "a store without ApplyMigrations checks the schema")
	s, err := New(ctx, pool, Options{Schema: schema, ApplyMigrations: true})
	require.NoError(t, err)
	assert.Same(t, pool, s.Pool())
	insert(t, s, job(spi.PriorityNormal, t0))
	require.NoError(t, s.Close())
	// The pool still belongs to the caller.
	require.NoError(t, pool.Ping(ctx))
}

func TestDefaultSchemaIsPublic(t *testing.T) {
	// Only checks the name: the tests must not write to public.
	dsn, _ := testDB(t)
	s, err := Open(context.Background(), dsn, Options{Schema: ""})
	if err != nil {
		assert.Contains(t, err.Error(), `schema "public"`)
		return
	}
	assert.Equal(t, "public", s.Schema())
	require.NoError(t, s.Close())
}

func TestCloseIsIdempotentAndLaterCallsFail(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	s, err := Open(ctx, dsn, Options{Schema: schema, ApplyMigrations: true})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())

	_, err = s.InsertJobs(ctx, []*spi.Job{job(spi.PriorityNormal, t0)}, spi.InsertOptions{})
	assert.ErrorIs(t, err, spi.ErrClosed)
	_, err = s.GetJob(ctx, newID())
	assert.ErrorIs(t, err, spi.ErrClosed)
	_, _, err = s.ListJobs(ctx, spi.ListParams{})
	assert.ErrorIs(t, err, spi.ErrClosed)
	_, err = s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n", Limit: 1, Now: t0})
	assert.ErrorIs(t, err, spi.ErrClosed)
	_, err = s.CompleteJobs(ctx, nil)
	assert.ErrorIs(t, err, spi.ErrClosed)
	_, err = s.ReleaseJobs(ctx, nil, t0)
	assert.ErrorIs(t, err, spi.ErrClosed)
	assert.ErrorIs(t, s.RetryFailedJob(ctx, newID(), t0), spi.ErrClosed)
	assert.ErrorIs(t, s.CancelJob(ctx, newID(), t0), spi.ErrClosed)
	assert.ErrorIs(t, s.Heartbeat(ctx, "n", t0), spi.ErrClosed)
	assert.ErrorIs(t, s.DeregisterNode(ctx, "n"), spi.ErrClosed)
	_, err = s.RecoverOrphans(ctx, spi.RecoverParams{Now: t0})
	assert.ErrorIs(t, err, spi.ErrClosed)
	_, err = s.InsertJobsTx(ctx, nil, nil, spi.InsertOptions{})
	assert.ErrorIs(t, err, spi.ErrClosed)
	assert.ErrorIs(t, s.ListenWakeups(ctx, func(spi.WakeupHint) {}), spi.ErrClosed)
}
