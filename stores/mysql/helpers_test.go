package mysql

import (
	"context"
	"database/sql"
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/dbtest"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// t0 is the synthetic "now" of most tests.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

var idSeq atomic.Uint64

// newID returns a fresh UUIDv7-shaped id whose order follows the call order.
func newID() uuid.UUID {
	n := idSeq.Add(1)
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[0:8], uint64(t0.UnixMilli())<<16|0x7000)
	binary.BigEndian.PutUint64(u[8:16], n)
	u[6] = 0x70
	u[8] = (u[8] & 0x3f) | 0x80
	return u
}

// testDB returns the test server's DSN and a fresh database on it.
func testDB(t testing.TB) (dsn, database string) {
	t.Helper()
	return dbtest.MySQL(t)
}

// openDatabase opens a store on database with migrations applied.
func openDatabase(t testing.TB, dsn, database string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn, Options{Database: database, ApplyMigrations: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openStore opens a store on a fresh database.
func openStore(t testing.TB) *Store {
	t.Helper()
	dsn, database := testDB(t)
	return openDatabase(t, dsn, database)
}

// rawDB returns a pool on the server of dsn, with database selected (none
// when empty), closed at cleanup.
func rawDB(t testing.TB, dsn, database string) *sql.DB {
	t.Helper()
	cfg, err := parseDSN(dsn)
	require.NoError(t, err)
	cfg.DBName = database
	cfg.ParseTime = true
	cfg.InterpolateParams = true
	cfg.MultiStatements = true
	db, err := newDB(cfg, nil, 4)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// job returns a PENDING job due at due, with the client's defaults.
func job(prio spi.Priority, due time.Time) *spi.Job {
	return &spi.Job{
		ID:           newID(),
		TaskName:     "send-email",
		Payload:      []byte(`{"to":"a@example.com"}`),
		Status:       spi.StatusPending,
		Priority:     prio,
		ScheduledAt:  due,
		CreatedAt:    t0.Add(-time.Hour),
		MaxRetries:   3,
		Backoff:      spi.BackoffExponential,
		BackoffParam: time.Second,
	}
}

func insert(t testing.TB, s *Store, jobs ...*spi.Job) {
	t.Helper()
	res, err := s.InsertJobs(context.Background(), jobs)
	require.NoError(t, err)
	require.Len(t, res, len(jobs))
	for i, r := range res {
		require.False(t, r.Duplicate)
		require.Equal(t, jobs[i].ID, r.ID)
	}
}

func get(t testing.TB, s *Store, id uuid.UUID) *spi.Job {
	t.Helper()
	j, err := s.GetJob(context.Background(), id)
	require.NoError(t, err)
	return j
}

func claim(t testing.TB, s *Store, node string, limit int, now time.Time, boost time.Duration) []*spi.Job {
	t.Helper()
	jobs, err := s.ClaimJobs(context.Background(), spi.ClaimParams{NodeID: node, Limit: limit, Now: now, BoostInterval: boost})
	require.NoError(t, err)
	return jobs
}

func ids(jobs []*spi.Job) []uuid.UUID {
	out := make([]uuid.UUID, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func ref(j *spi.Job) spi.ClaimRef { return spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq} }

// exec runs raw SQL on the store's pool.
func exec(t testing.TB, s *Store, q string, args ...any) {
	t.Helper()
	_, err := s.db.ExecContext(context.Background(), q, args...)
	require.NoError(t, err)
}

// table is the qualified name of the store's table scheduler_<name>.
func table(s *Store, name string) string {
	q, _ := s.dialect.Syntax.SQL("{" + name + "}")
	return q
}
