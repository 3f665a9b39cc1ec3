package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestOpenCreatesSchema(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := openAt(t, path)

	var mode string
	require.NoError(t, s.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	assert.Equal(t, "wal", mode)
	var fk int
	require.NoError(t, s.db.QueryRow(`PRAGMA foreign_keys`).Scan(&fk))
	assert.Equal(t, 1, fk)

	var version, n int
	require.NoError(t, s.db.QueryRow(`SELECT MAX(version), COUNT(*) FROM ratchet_schema_version`).Scan(&version, &n))
	assert.Equal(t, ddl.Latest(Dialect), version)
	assert.Equal(t, ddl.Latest(Dialect), n)
	for _, table := range []string{"scheduler_job", "scheduler_job_tag", "scheduler_node", "ratchet_schema_version",
		"scheduler_lease", "scheduler_job_state", "scheduler_job_property"} {
		var name string
		require.NoError(t, s.db.QueryRow(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name = ?`, table).Scan(&name), table)
	}
	require.NoError(t, s.Close())

	// Reopening applies nothing again.
	s2, err := Open(ctx, path, Options{BusyTimeout: time.Second, Create: true})
	require.NoError(t, err)
	defer s2.Close()
	require.NoError(t, s2.db.QueryRow(`SELECT COUNT(*) FROM ratchet_schema_version`).Scan(&n))
	assert.Equal(t, ddl.Latest(Dialect), n)
	assert.Equal(t, path, s2.Path())
}

func TestOpenEmptyFileIsNewDatabase(t *testing.T) {
	path := dbPath(t)
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	s := openAt(t, path)
	insert(t, s, job(spi.PriorityNormal, t0))
}

func TestOpenMemory(t *testing.T) {
	s := openAt(t, ":memory:")
	j := job(spi.PriorityNormal, t0)
	insert(t, s, j)
	assert.Equal(t, j.ID, get(t, s, j.ID).ID)
}

func TestOpenBadArguments(t *testing.T) {
	ctx := context.Background()
	_, err := Open(ctx, "", Options{Create: true})
	require.Error(t, err)
	_, err = Open(ctx, dbPath(t), Options{BusyTimeout: -time.Second, Create: true})
	require.Error(t, err)
	_, err = Open(ctx, t.TempDir(), Options{Create: true})
	require.ErrorContains(t, err, "directory")
}

// assertUntouched checks that a refused file kept its bytes and got no
// journal or WAL beside it.
func assertUntouched(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the refused file was modified")
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		_, err := os.Stat(path + suffix)
		assert.True(t, os.IsNotExist(err), "%s%s was created", path, suffix)
	}
}

func TestOpenRejectsNonSQLiteFile(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for name, content := range map[string][]byte{
		"random bytes": func() []byte {
			b := make([]byte, 8192)
			for i := range b {
				b[i] = byte(r.UintN(256))
			}
			return b
		}(),
		"short text": []byte("hello"),
		"json":       []byte(`{"jobs": []}` + strings.Repeat(" ", 100)),
	} {
		t.Run(name, func(t *testing.T) {
			path := dbPath(t)
			require.NoError(t, os.WriteFile(path, content, 0o600))
			_, err := Open(context.Background(), path, Options{Create: true})
			require.ErrorIs(t, err, spi.ErrSchema)
			assert.Contains(t, err.Error(), "is not a Ratchet database")
			assert.Contains(t, err.Error(), path)
			assertUntouched(t, path, content)
		})
	}
}

func TestOpenRejectsForeignSQLiteDatabase(t *testing.T) {
	path := dbPath(t)
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = raw.Exec(`CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('ada')`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	_, err = Open(context.Background(), path, Options{Create: true})
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), "is not a Ratchet database")
	assert.Contains(t, err.Error(), "customers")
	assert.Contains(t, err.Error(), "ratchet_schema_version")
	assertUntouched(t, path, before)
}

// A schema newer than the code whose later migrations are all marked
// compatible opens and says so; one more not marked makes it refuse.
func TestOpenAcceptsACompatibleNewerSchema(t *testing.T) {
	path := dbPath(t)
	s := openAt(t, path)
	latest := ddl.Latest(Dialect)
	assert.Empty(t, s.SchemaWarning())
	exec(t, s, `INSERT INTO ratchet_schema_version (version, applied_at, compatible) VALUES (?, 0, 1)`, latest+1)
	for _, create := range []bool{false, true} {
		s2, err := Open(context.Background(), path, Options{Create: create})
		require.NoError(t, err, "Create %v", create)
		assert.Contains(t, s2.SchemaWarning(), fmt.Sprintf("is at version %d, newer than version %d of this code", latest+1, latest))
		require.NoError(t, s2.Close())
	}
	exec(t, s, `INSERT INTO ratchet_schema_version (version, applied_at) VALUES (?, 0)`, latest+2)
	_, err := Open(context.Background(), path, Options{})
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), fmt.Sprintf("version %d is not marked compatible", latest+2))
}

func TestOpenRejectsNewerSchema(t *testing.T) {
	path := dbPath(t)
	s := openAt(t, path)
	exec(t, s, `INSERT INTO ratchet_schema_version (version, applied_at) VALUES (99, 0)`)
	require.NoError(t, s.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	_, err = Open(context.Background(), path, Options{Create: true})
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), "version 99")
	assert.Contains(t, err.Error(), fmt.Sprintf("version %d,", ddl.Latest(Dialect)))
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after)
}

// TestMigrateOlderSchema brings a version-1 database to a synthetic version
// 2, as Open does when the code ships a new migration.
func TestMigrateOlderSchema(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := openAt(t, path)
	j := job(spi.PriorityHigh, t0)
	insert(t, s, j)

	migs, err := ddl.Migrations(Dialect)
	require.NoError(t, err)
	v2 := append(migs[:len(migs):len(migs)], ddl.Migration{
		Version: len(migs) + 1,
		Name:    "add_note",
		SQL: `ALTER TABLE scheduler_job ADD COLUMN note TEXT;
			INSERT INTO ratchet_schema_version (version, applied_at) VALUES (` + strconv.Itoa(len(migs)+1) + `, 0);`,
	})
	require.NoError(t, migrate(ctx, s.db, path, v2))
	var version int
	require.NoError(t, s.db.QueryRow(`SELECT MAX(version) FROM ratchet_schema_version`).Scan(&version))
	assert.Equal(t, len(migs)+1, version)
	var note sql.NullString
	require.NoError(t, s.db.QueryRow(`SELECT note FROM scheduler_job WHERE job_id = ?`, j.ID.String()).Scan(&note))
	assert.False(t, note.Valid)
	// Applying again is a no-op.
	require.NoError(t, migrate(ctx, s.db, path, v2))

	// A migration that fails leaves the database as it was.
	bad := append(v2[:len(v2):len(v2)], ddl.Migration{Version: len(v2) + 1, Name: "broken", SQL: `CREATE TABLE x (a INT); SELECT * FROM no_such_table;`})
	err = migrate(ctx, s.db, path, bad)
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.Contains(t, err.Error(), "broken")
	var n int
	require.NoError(t, s.db.QueryRow(`SELECT COUNT(*) FROM sqlite_schema WHERE name = 'x'`).Scan(&n))
	assert.Zero(t, n)

	// A migration that does not record its version is refused.
	silent := append(v2[:len(v2):len(v2)], ddl.Migration{Version: len(v2) + 1, Name: "silent", SQL: `CREATE TABLE y (a INT);`})
	require.ErrorIs(t, migrate(ctx, s.db, path, silent), spi.ErrSchema)
}

// TestUpgradeFromVersion1 opens a database created at schema version 1
// that holds jobs: Open applies 0002_cluster and 0003_task_claim, and the old jobs read back
// without a resource and are claimed as before.
func TestUpgradeFromVersion1(t *testing.T) {
	path := dbPath(t)
	raw := databaseAt(t, path, 1)
	id := newID()
	_, err := raw.Exec(`INSERT INTO scheduler_job (job_id, task_name, status, priority, scheduled_time)
		VALUES (?, 'old', 'PENDING', 2, ?)`, id.String(), t0.UnixMicro())
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	s := openUpgraded(t, path)
	j := get(t, s, id)
	assert.Empty(t, j.Resource)
	assert.Zero(t, j.ResourceLimit)
	got := claim(t, s, "n", 10, t0, 0)
	require.Len(t, got, 1)
	assert.Equal(t, id, got[0].ID)
}

func TestOpenConcurrentlyOnNewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	errs := make(chan error, 4)
	stores := make(chan *Store, 4)
	for range 4 {
		go func() {
			s, err := Open(context.Background(), path, Options{Create: true})
			errs <- err
			stores <- s
		}()
	}
	for range 4 {
		require.NoError(t, <-errs)
		s := <-stores
		t.Cleanup(func() { _ = s.Close() })
	}
	s := openAt(t, path)
	var n int
	require.NoError(t, s.db.QueryRow(`SELECT COUNT(*) FROM ratchet_schema_version`).Scan(&n))
	assert.Equal(t, ddl.Latest(Dialect), n)
}

func TestCloseIsIdempotentAndLaterCallsFail(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, dbPath(t), Options{Create: true})
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

func TestDurableAcrossReopen(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s, err := Open(ctx, path, Options{Create: true})
	require.NoError(t, err)
	pending := job(spi.PriorityNormal, t0.Add(time.Hour))
	running := job(spi.PriorityHigh, t0)
	running.Tags = []string{"gpu"}
	running.Params = map[string]string{"region": "eu"}
	insert(t, s, pending, running)
	claimed := claim(t, s, "node-1", 10, t0, 0)
	require.Equal(t, ids(claimed), ids([]*spi.Job{running}))
	require.NoError(t, s.Heartbeat(ctx, "node-1", t0))
	// The process "dies": the store is closed with the job still RUNNING.
	require.NoError(t, s.Close())

	s2 := openAt(t, path)
	got := get(t, s2, pending.ID)
	assert.Equal(t, spi.StatusPending, got.Status)
	got = get(t, s2, running.ID)
	assert.Equal(t, claimed[0], got)
	assert.Equal(t, spi.StatusRunning, got.Status)
	assert.Equal(t, "node-1", got.OwnerNode)
	assert.Equal(t, int64(1), got.ClaimSeq)

	// Nobody else can claim it; recovery brings it back.
	assert.Empty(t, claim(t, s2, "node-2", 10, t0.Add(time.Minute), 0))
	rec, err := s2.RecoverOrphans(ctx, spi.RecoverParams{Now: t0.Add(time.Minute), Grace: 30 * time.Second, MaxCrashRedeliveries: 3})
	require.NoError(t, err)
	require.Len(t, rec, 1)
	assert.Equal(t, spi.RecoveredJob{JobID: running.ID, TaskName: running.TaskName, FromNode: "node-1", NewStatus: spi.StatusPending, CrashCount: 1}, rec[0])
}

// TestUpgradeToPartialIndexes opens a database created at schema version
// 12 that holds jobs of every kind of status: migration 13 rebuilds the
// job indexes as partial ones, and each read finds the jobs through them
// as before (the claim, a listing of one status, the gauges' counts).
func TestUpgradeToPartialIndexes(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	raw := databaseAt(t, path, 12)
	ids := map[string]uuid.UUID{}
	for _, status := range []string{"PENDING", "RUNNING", "FAILED", "SUCCEEDED", "WAITING"} {
		ids[status] = newID()
		_, err := raw.Exec(`INSERT INTO scheduler_job (job_id, task_name, status, priority, scheduled_time, owner_node)
			VALUES (?, 'old', ?, 2, ?, CASE WHEN ? = 'RUNNING' THEN 'gone' END)`, ids[status].String(), status, t0.UnixMicro(), status)
		require.NoError(t, err)
	}
	require.NoError(t, raw.Close())

	s := openUpgraded(t, path)
	st, err := s.JobStats(ctx, t0)
	require.NoError(t, err)
	counts := map[spi.Status]int64{}
	for _, c := range st.Counts {
		counts[c.Status] += c.N
	}
	assert.Equal(t, map[spi.Status]int64{spi.StatusPending: 1, spi.StatusRunning: 1, spi.StatusFailed: 1, spi.StatusSucceeded: 1, spi.StatusWaiting: 1}, counts)
	for _, status := range []spi.Status{spi.StatusFailed, spi.StatusRunning, spi.StatusWaiting} {
		jobs, _, err := s.ListJobs(ctx, spi.ListParams{Status: status, Limit: 10})
		require.NoError(t, err)
		require.Len(t, jobs, 1, "%s", status)
		assert.Equal(t, ids[string(status)], jobs[0].ID, "%s", status)
	}
	got := claim(t, s, "n", 10, t0, 0)
	require.Len(t, got, 1)
	assert.Equal(t, ids["PENDING"], got[0].ID)
}

// databaseAt creates at path a database at schema version, through a
// connection of its own that the caller closes.
func databaseAt(t *testing.T, path string, version int) *sql.DB {
	t.Helper()
	migs, err := ddl.Migrations(Dialect)
	require.NoError(t, err)
	require.Greater(t, len(migs), version)
	raw, err := sql.Open("sqlite", dsn(path, Options{BusyTimeout: time.Second, Create: true}))
	require.NoError(t, err)
	require.NoError(t, migrate(context.Background(), raw, path, migs[:version]))
	return raw
}

// openUpgraded opens the database at path and checks that Open brought it
// to the latest schema version.
func openUpgraded(t *testing.T, path string) *Store {
	t.Helper()
	migs, err := ddl.Migrations(Dialect)
	require.NoError(t, err)
	s := openAt(t, path)
	var version int
	require.NoError(t, s.db.QueryRow(`SELECT MAX(version) FROM ratchet_schema_version`).Scan(&version))
	assert.Equal(t, len(migs), version)
	return s
}

// Without Create, Open only checks: a missing file is an error naming it
// and is not created; a database at an older version is an error naming
// both versions; a current one opens.
func TestOpenWithoutCreateOnlyChecks(t *testing.T) {
	ctx := context.Background()
	missing := dbPath(t)
	_, err := Open(ctx, missing, Options{})
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.ErrorContains(t, err, missing+": ratchet: schema mismatch: no such file")
	_, statErr := os.Stat(missing)
	assert.ErrorIs(t, statErr, os.ErrNotExist, "no file created")

	path := dbPath(t)
	s := openAt(t, path)
	var latest int
	require.NoError(t, s.db.QueryRow("SELECT MAX(version) FROM ratchet_schema_version").Scan(&latest))
	require.NoError(t, s.Close())
	current, err := Open(ctx, path, Options{})
	require.NoError(t, err, "a current database opens without Create")
	require.NoError(t, current.Close())

	older := openAt(t, path)
	exec(t, older, "DELETE FROM ratchet_schema_version WHERE version = ?", latest)
	require.NoError(t, older.Close())
	_, err = Open(ctx, path, Options{})
	require.ErrorIs(t, err, spi.ErrSchema)
	assert.ErrorContains(t, err, fmt.Sprintf("is at version %d, this code needs version %d", latest-1, latest))
	assert.ErrorContains(t, err, "ratchet migrate")
}
