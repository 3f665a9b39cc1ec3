package mysql

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// versions returns the recorded schema versions of the store's database.
func versions(t *testing.T, s *Store) []int {
	t.Helper()
	rows, err := s.db.Query(`SELECT version FROM ` + quoteIdent(s.database) + `.` + sqlcore.VersionTable + ` ORDER BY version`)
	require.NoError(t, err)
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		require.NoError(t, rows.Scan(&v))
		out = append(out, v)
	}
	return out
}

// tablesOf lists the tables of database.
func tablesOf(t *testing.T, dsn, database string) []string {
	t.Helper()
	db := rawDB(t, dsn, "")
	rows, err := db.Query(`SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY 1`, database)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		out = append(out, n)
	}
	return out
}

func databaseExists(t *testing.T, dsn, database string) bool {
	t.Helper()
	var n int
	require.NoError(t, rawDB(t, dsn, "").QueryRow(`SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?`, database).Scan(&n))
	return n == 1
}

func TestOpenAppliesMigrations(t *testing.T) {
	ctx := context.Background()
	dsn, database := testDB(t)
	s := openDatabase(t, dsn, database)
	assert.Equal(t, database, s.Database())
	assert.Equal(t, schemaOf("").All(), tablesOf(t, dsn, database))
	latest := ddl.Latest(Dialect)
	require.Equal(t, 22, latest)
	assert.Equal(t, ddl.Versions(Dialect), versions(t, s))
	assert.True(t, strings.HasPrefix(s.ServerVersion(), "MariaDB ") || strings.HasPrefix(s.ServerVersion(), "MySQL "), s.ServerVersion())

	// Re-applying is a no-op, and so is opening again with or without
	// migrations.
	applied, err := Migrate(ctx, s.DB())
	require.NoError(t, err)
	assert.Empty(t, applied)
	s2 := openDatabase(t, dsn, database)
	s3, err := Open(ctx, dsn, Options{Database: database})
	require.NoError(t, err)
	require.NoError(t, s3.Close())
	assert.Equal(t, ddl.Versions(Dialect), versions(t, s2))

	// The indexes of the DDL are there.
	rows, err := s.db.Query(`SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? ORDER BY 1`, database)
	require.NoError(t, err)
	defer rows.Close()
	var idx []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		idx = append(idx, n)
	}
	for _, want := range []string{"idx_scheduler_job_claim", "idx_scheduler_job_status", "idx_scheduler_job_resource",
		"idx_scheduler_job_tag_tag", "uq_scheduler_job_idempotency_key", "idx_scheduler_job_property_value"} {
		assert.Contains(t, idx, want)
	}
	assert.NotContains(t, idx, "idx_scheduler_job_owner", "migration 14 drops it")
}

func TestSessionSettings(t *testing.T) {
	s := openStore(t)
	var mode, zone, isolation string
	q := `SELECT @@sql_mode, @@time_zone, @@` + s.server.isolationVariable()
	require.NoError(t, s.db.QueryRow(q).Scan(&mode, &zone, &isolation))
	assert.Contains(t, mode, "STRICT_ALL_TABLES")
	assert.Equal(t, "+00:00", zone)
	assert.Equal(t, "READ-COMMITTED", isolation)
}

func TestMigrateFreshDatabaseReturnsApplied(t *testing.T) {
	ctx := context.Background()
	dsn, database := testDB(t)
	db := rawDB(t, dsn, database)
	applied, err := Migrate(ctx, db)
	require.NoError(t, err)
	assert.Equal(t, ddl.Versions(Dialect), applied)
	applied, err = Migrate(ctx, db)
	require.NoError(t, err)
	assert.Equal(t, []int{}, applied)
	_, err = Migrate(ctx, nil)
	require.Error(t, err)
	_, err = Migrate(ctx, rawDB(t, dsn, ""))
	require.ErrorContains(t, err, "no current database")
}

func TestMigrateDSNCreatesTheDatabase(t *testing.T) {
	ctx := context.Background()
	dsn, database := testDB(t)
	_, err := rawDB(t, dsn, "").Exec("DROP DATABASE " + quoteIdent(database))
	require.NoError(t, err)
	applied, err := MigrateDSN(ctx, dsn, database)
	require.NoError(t, err)
	assert.Equal(t, ddl.Versions(Dialect), applied)
	assert.Equal(t, schemaOf("").All(), tablesOf(t, dsn, database))
	applied, err = MigrateDSN(ctx, dsn, database)
	require.NoError(t, err)
	assert.Empty(t, applied)
	_, err = MigrateDSN(ctx, "root@tcp(127.0.0.1:1)/", database)
	require.ErrorContains(t, err, "cannot connect")
	_, err = MigrateDSN(ctx, dsn, "")
	if cfg, _ := parseDSN(dsn); cfg.DBName == "" {
		require.ErrorContains(t, err, "no database")
	}
}

func TestOpenCreatesMissingDatabaseOnlyWithApplyMigrations(t *testing.T) {
	ctx := context.Background()
	dsn, database := testDB(t)
	_, err := rawDB(t, dsn, "").Exec("DROP DATABASE " + quoteIdent(database))
	require.NoError(t, err)

	_, err = Open(ctx, dsn, Options{Database: database})
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), "does not exist")
	assert.Contains(t, err.Error(), database)
	assert.False(t, databaseExists(t, dsn, database), "a store without ApplyMigrations must not create the database")

	s := openDatabase(t, dsn, database)
	assert.Equal(t, ddl.Versions(Dialect), versions(t, s))
}

func TestOpenWithoutMigrationsOnEmptyDatabase(t *testing.T) {
	dsn, database := testDB(t)
	_, err := Open(context.Background(), dsn, Options{Database: database})
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), "no Ratchet tables")
	assert.Contains(t, err.Error(), "ApplyMigrations")
	assert.Empty(t, tablesOf(t, dsn, database), "the check must write nothing")
}

func TestOpenLeavesOtherTablesAlone(t *testing.T) {
	// An application's own tables in the database are no obstacle.
	dsn, database := testDB(t)
	_, err := rawDB(t, dsn, database).Exec(`CREATE TABLE customers (id int PRIMARY KEY)`)
	require.NoError(t, err)
	openDatabase(t, dsn, database)
	assert.Contains(t, tablesOf(t, dsn, database), "customers")
}

func TestOpenRejectsNewerSchema(t *testing.T) {
	ctx := context.Background()
	dsn, database := testDB(t)
	s := openDatabase(t, dsn, database)
	exec(t, s, `INSERT INTO `+quoteIdent(database)+`.`+sqlcore.VersionTable+` (version, applied_at) VALUES (99, UTC_TIMESTAMP(6))`)
	for _, apply := range []bool{false, true} {
		_, err := Open(ctx, dsn, Options{Database: database, ApplyMigrations: apply})
		require.ErrorIs(t, err, spi.ErrSchema, "ApplyMigrations %v", apply)
		assert.Contains(t, err.Error(), "version 99")
		assert.Contains(t, err.Error(), fmt.Sprintf("newer than version %d", ddl.Latest(Dialect)))
	}
	applied, err := Migrate(ctx, s.DB())
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Empty(t, applied)
	assert.Equal(t, append(ddl.Versions(Dialect), 99), versions(t, s))
}

func TestOpenRejectsPartialSchema(t *testing.T) {
	cases := []struct {
		name, damage, want string
	}{
		{"no version table", `DROP TABLE ratchet_schema_version`, "but no ratchet_schema_version table"},
		{"empty version table", `DELETE FROM ratchet_schema_version`, "empty ratchet_schema_version"},
		{"a table dropped", `DROP TABLE scheduler_node`, "lacks the tables scheduler_node"},
		{"two tables dropped", `DROP TABLE scheduler_job_tag, scheduler_lease`, "lacks the tables scheduler_job_tag, scheduler_lease"},
		{"a migration failed half-way", `DELETE FROM ratchet_schema_version WHERE version >= 2`, "failed half-way"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dsn, database := testDB(t)
			db := rawDB(t, dsn, database)
			_, err := Migrate(ctx, db)
			require.NoError(t, err)
			_, err = db.Exec(tc.damage)
			require.NoError(t, err)
			before := tablesOf(t, dsn, database)
			for _, apply := range []bool{false, true} {
				_, err := Open(ctx, dsn, Options{Database: database, ApplyMigrations: apply})
				require.ErrorIs(t, err, spi.ErrSchema, "ApplyMigrations %v", apply)
				assert.Contains(t, err.Error(), tc.want)
				assert.Contains(t, err.Error(), database)
			}
			_, err = Migrate(ctx, db)
			require.ErrorIs(t, err, spi.ErrSchema)
			assert.Equal(t, before, tablesOf(t, dsn, database), "a refused schema must be left as it was")
		})
	}
}

func TestMigrateConcurrently(t *testing.T) {
	dsn, database := testDB(t)
	const n = 4
	results := make([][]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		db := rawDB(t, dsn, database) // a pool each, as separate processes
		wg.Go(func() { results[i], errs[i] = Migrate(context.Background(), db) })
	}
	wg.Wait()
	var all []int
	for i := range n {
		require.NoError(t, errs[i])
		all = append(all, results[i]...)
	}
	assert.ElementsMatch(t, ddl.Versions(Dialect), all, "each migration is applied exactly once: %v", results)
	s := openDatabase(t, dsn, database)
	assert.Equal(t, ddl.Versions(Dialect), versions(t, s))
}

// TestMigrateOlderSchema brings the schema to a synthetic next version, as
// Open does when the code ships a new migration, and checks what a failing
// migration reports.
func TestMigrateOlderSchema(t *testing.T) {
	ctx := context.Background()
	dsn, database := testDB(t)
	s := openDatabase(t, dsn, database)
	j := job(spi.PriorityHigh, t0)
	insert(t, s, j)

	migs, err := ddl.Migrations(Dialect)
	require.NoError(t, err)
	next := len(migs) + 1
	v3 := append(migs[:len(migs):len(migs)], ddl.Migration{
		Version: next,
		Name:    "add_note",
		SQL: `-- a comment; with a semicolon
ALTER TABLE scheduler_job ADD COLUMN note TEXT;
INSERT INTO ratchet_schema_version (version, applied_at)
VALUES (` + strconv.Itoa(next) + `, UTC_TIMESTAMP(6));`,
	})
	applied, err := migrate(ctx, s.db, v3)
	require.NoError(t, err)
	assert.Equal(t, []int{next}, applied)
	var note *string
	require.NoError(t, s.db.QueryRow(`SELECT note FROM `+table(s, "job")+` WHERE job_id = ?`, j.ID[:]).Scan(&note))
	assert.Nil(t, note)
	applied, err = migrate(ctx, s.db, v3)
	require.NoError(t, err)
	assert.Empty(t, applied, "applying again is a no-op")

	// A migration that fails says which statement, and that MySQL kept the
	// statements before it.
	bad := append(v3[:len(v3):len(v3)], ddl.Migration{Version: next + 1, Name: "broken", SQL: "CREATE TABLE x (a int);\nSELECT * FROM no_such_table;"})
	_, err = migrate(ctx, s.db, bad)
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), "broken, statement 2")
	assert.Contains(t, err.Error(), "stay applied")

	// A migration that does not record its version is refused.
	silent := append(v3[:len(v3):len(v3)], ddl.Migration{Version: next + 1, Name: "silent", SQL: `CREATE TABLE y (a int);`})
	_, err = migrate(ctx, s.db, silent)
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), fmt.Sprintf("left the recorded version at %d", next))
}

func TestOpenOlderSchemaWithoutMigrations(t *testing.T) {
	ctx := context.Background()
	dsn, database, db, migs := olderDatabase(t, 1)
	err := checkSchemaAt(ctx, db, database, 2)
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), "is at version 1, this code needs version 2")
	assert.Contains(t, err.Error(), "apply the migrations")
	_, err = Open(ctx, dsn, Options{Database: database})
	require.ErrorIs(t, err, spi.ErrSchema)
	applied, err := migrate(ctx, db, migs)
	require.NoError(t, err)
	assert.Equal(t, ddl.Versions(Dialect)[1:], applied)
	require.NoError(t, checkSchemaAt(ctx, db, database, ddl.Latest(Dialect)))
}

func TestSplitStatements(t *testing.T) {
	migs, err := ddl.Migrations(Dialect)
	require.NoError(t, err)
	assert.Len(t, sqlcore.SplitStatements(migs[0].SQL), 5)
	assert.Len(t, sqlcore.SplitStatements(migs[1].SQL), 6)
}

func TestDatabasesAreIsolated(t *testing.T) {
	dsn, a := testDB(t)
	_, b := testDB(t)
	sa := openDatabase(t, dsn, a)
	sb := openDatabase(t, dsn, b)
	j := job(spi.PriorityNormal, t0)
	insert(t, sa, j)
	_, err := sb.GetJob(context.Background(), j.ID)
	require.ErrorIs(t, err, spi.ErrNotFound)
	assert.Empty(t, claim(t, sb, "n", 10, t0, 0))
	assert.Len(t, claim(t, sa, "n", 10, t0, 0), 1)
}

func TestDatabaseNameIsQuoted(t *testing.T) {
	// A name that needs quoting works everywhere: migrations, statements,
	// the migration lock.
	ctx := context.Background()
	dsn, base := testDB(t)
	database := base + "-Mixed `x` ü"
	t.Cleanup(func() { _, _ = rawDB(t, dsn, "").Exec("DROP DATABASE IF EXISTS " + quoteIdent(database)) })
	s := openDatabase(t, dsn, database)
	j := job(spi.PriorityHigh, t0)
	j.Tags = []string{"a"}
	j.IdempotencyKey = "k"
	insert(t, s, j)
	assert.Equal(t, j.Tags, get(t, s, j.ID).Tags)
	c := claim(t, s, "n", 10, t0, 0)
	require.Len(t, c, 1)
	ok, err := s.CompleteJobs(ctx, []spi.Completion{{ClaimRef: ref(c[0]), Outcome: spi.OutcomeSucceeded, FinishedAt: t0}})
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, ok)
}

func TestOpenUnreachableFailsFast(t *testing.T) {
	start := time.Now()
	_, err := Open(context.Background(), "root@tcp(127.0.0.1:1)/test", Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "127.0.0.1:1")
	assert.Contains(t, err.Error(), "cannot connect")
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestOpenSilentServerTimesOut(t *testing.T) {
	// A server that accepts connections but never answers must not hang
	// Open: the connect timeout ends the attempt.
	addr := dbtest.SilentServer(t)
	start := time.Now()
	_, err := Open(context.Background(), "root@tcp("+addr+")/test", Options{ConnectTimeout: 300 * time.Millisecond})
	require.Error(t, err)
	assert.Contains(t, err.Error(), addr)
	assert.Less(t, time.Since(start), 5*time.Second)

	// The DSN's timeout applies when Options.ConnectTimeout is zero.
	start = time.Now()
	_, err = Open(context.Background(), "mysql://root@"+addr+"/test?timeout=300ms", Options{})
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)

	// And ctx bounds it too.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = Open(ctx, "root@tcp("+addr+")/test", Options{})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "error %v", err)
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestOpenMalformedDSN(t *testing.T) {
	for _, dsn := range []string{
		"root:s3cret@tcp(127.0.0.1:3306",
		"root:s3cret@tcp(127.0.0.1:3306)/x?parseTime=maybe",
		"mysql://root:s3cret@127.0.0.1:notaport/x",
		"mysql://root:s3cret@127.0.0.1:3306/a/b",
		"mysql://root:s3cret@127.0.0.1:3306/x?timeout=soon",
		"mysql:///x",
	} {
		start := time.Now()
		_, err := Open(context.Background(), dsn, Options{})
		require.Error(t, err, dsn)
		assert.Contains(t, err.Error(), "invalid DSN", dsn)
		assert.NotContains(t, err.Error(), "s3cret", "the error must not show the password")
		assert.Less(t, time.Since(start), time.Second)
	}
	_, err := Open(context.Background(), "root@tcp(127.0.0.1:1)/test", Options{ConnectTimeout: -time.Second})
	require.ErrorContains(t, err, "negative connect timeout")
	_, err = Open(context.Background(), "root@tcp(127.0.0.1:1)/test", Options{MaxConns: -1})
	require.ErrorContains(t, err, "negative MaxConns")
	_, err = Open(context.Background(), "root@tcp(127.0.0.1:1)/", Options{})
	require.ErrorContains(t, err, "no database")
	_, err = Open(context.Background(), "root@tcp(127.0.0.1:1)/", Options{Database: strings.Repeat("d", 65)})
	require.ErrorContains(t, err, "longer than 64")
}

func TestParseDSNForms(t *testing.T) {
	cfg, err := parseDSN("mysql://app:p%40ss@db.example:3307/jobs?timeout=2s&tls=skip-verify")
	require.NoError(t, err)
	assert.Equal(t, "app", cfg.User)
	assert.Equal(t, "p@ss", cfg.Passwd)
	assert.Equal(t, "tcp", cfg.Net)
	assert.Equal(t, "db.example:3307", cfg.Addr)
	assert.Equal(t, "jobs", cfg.DBName)
	assert.Equal(t, 2*time.Second, cfg.Timeout)
	assert.Equal(t, "skip-verify", cfg.TLSConfig)

	cfg, err = parseDSN("mysql://root@127.0.0.1/test")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:3306", cfg.Addr)
	assert.Equal(t, "test", cfg.DBName)

	cfg, err = parseDSN("root@tcp(127.0.0.1:3306)/test?charset=utf8mb4")
	require.NoError(t, err)
	assert.Equal(t, "test", cfg.DBName)
}

func TestServerVersions(t *testing.T) {
	cases := []struct {
		version   string
		supported bool
		variable  string
	}{
		{"10.11.19-MariaDB-0+deb12u1", true, "tx_isolation"},
		{"10.6.21-MariaDB", true, "tx_isolation"},
		{"10.5.27-MariaDB-log", false, "tx_isolation"},
		{"11.4.5-MariaDB", true, "transaction_isolation"},
		{"8.0.36", true, "transaction_isolation"},
		{"8.4.3-commercial", true, "transaction_isolation"},
		{"5.7.44-log", false, "transaction_isolation"},
	}
	for _, tc := range cases {
		v, err := parseVersion(tc.version)
		require.NoError(t, err, tc.version)
		assert.Equal(t, tc.supported, v.supported(), tc.version)
		assert.Equal(t, tc.variable, v.isolationVariable(), tc.version)
	}
	_, err := parseVersion("banana")
	require.Error(t, err)
}

func TestCloseIsIdempotentAndLaterCallsFail(t *testing.T) {
	ctx := context.Background()
	dsn, database := testDB(t)
	s, err := Open(ctx, dsn, Options{Database: database, ApplyMigrations: true})
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
}
