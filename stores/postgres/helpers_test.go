package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

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

// testDB returns the test server's DSN and a fresh schema on it.
func testDB(t testing.TB) (dsn, schema string) {
	t.Helper()
	return dbtest.Postgres(t)
}

// openSchema opens a store on schema with migrations applied.
func openSchema(t testing.TB, dsn, schema string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn, Options{Schema: schema, ApplyMigrations: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openStore opens a store on a fresh schema.
func openStore(t testing.TB) *Store {
	t.Helper()
	dsn, schema := testDB(t)
	return openSchema(t, dsn, schema)
}

// openStoreWith opens a store on a fresh schema, with param (a DSN
// setting, "key=value") added to the test server's DSN.
func openStoreWith(t testing.TB, param string) *Store {
	t.Helper()
	dsn, schema := testDB(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return openSchema(t, dsn+sep+param, schema)
}

// rawPool returns a pool on dsn of the test's own, closed at cleanup.
func rawPool(t testing.TB, dsn string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// exec runs raw SQL on the store's pool with search_path at its schema.
func exec(t testing.TB, s *Store, q string, args ...any) {
	t.Helper()
	_, err := s.pool.Exec(context.Background(), q, args...)
	require.NoError(t, err)
}
