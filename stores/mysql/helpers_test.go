package mysql

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	"github.com/ratchet-go/ratchet/tck/storetest"
)

// The job helpers shared with the other stores' tests.
var (
	t0     = storetest.T0
	newID  = storetest.NewID
	job    = storetest.Job
	insert = storetest.Insert
	get    = storetest.Get
	claim  = storetest.Claim
	ids    = storetest.IDs
	ref    = storetest.Ref
)

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

// olderDatabase returns a fresh database migrated to version n only, a pool
// on it, and every migration (to bring it up to date).
func olderDatabase(t testing.TB, n int) (dsn, database string, db *sql.DB, migs []ddl.Migration) {
	t.Helper()
	dsn, database = testDB(t)
	db = rawDB(t, dsn, database)
	migs, err := ddl.Migrations(Dialect)
	require.NoError(t, err)
	_, err = migrate(context.Background(), db, migs[:n])
	require.NoError(t, err)
	return dsn, database, db, migs
}
