package privatedb_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/dbtest/privatedb"
)

// skipMissing skips a test whose server packages are not installed, and
// fails it under CI=true, whose machine installs them.
func skipMissing(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, privatedb.ErrMissing) && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	require.NoError(t, err)
}

// TestPostgresFailsOverTwice: a synchronous pair keeps every committed row
// through two failovers, and the multi-host DSN reaches each new primary.
func TestPostgresFailsOverTwice(t *testing.T) {
	ctx := context.Background()
	pg, err := privatedb.StartPostgres(ctx, privatedb.PGOptions{Standby: true})
	skipMissing(t, err)
	t.Cleanup(func() { assert.NoError(t, pg.Stop(context.Background())) })

	exec := func(sql string) int {
		t.Helper()
		conn, err := pgx.Connect(ctx, pg.DSN("postgres"))
		require.NoError(t, err)
		defer func() { _ = conn.Close(ctx) }()
		_, err = conn.Exec(ctx, sql)
		require.NoError(t, err)
		var n int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM probe`).Scan(&n))
		return n
	}
	exec(`CREATE TABLE probe (id serial PRIMARY KEY)`)
	for round := 1; round <= 2; round++ {
		assert.Equal(t, round, exec(`INSERT INTO probe DEFAULT VALUES`))
		was := pg.PrimaryPort()
		times, err := pg.Failover(ctx)
		require.NoError(t, err)
		assert.NotEqual(t, was, pg.PrimaryPort())
		assert.Less(t, times.Down, 10*time.Second)
		again, err := privatedb.OpenPostgres(pg.Dir)
		require.NoError(t, err)
		assert.Equal(t, pg.PrimaryPort(), again.PrimaryPort(), "the state file follows the failover")
	}
	assert.Equal(t, 3, exec(`INSERT INTO probe DEFAULT VALUES`))
}

// TestAsynchronousStandbyBehindASlowLinkLosesTheLastCommits: a row
// committed on the primary less than the link's delay before its crash
// is not on the promoted standby; one committed long before is.
func TestAsynchronousStandbyBehindASlowLinkLosesTheLastCommits(t *testing.T) {
	ctx := context.Background()
	const delay = 500 * time.Millisecond
	pg, err := privatedb.StartPostgres(ctx, privatedb.PGOptions{Standby: true, Async: true, ReplicationDelay: delay})
	skipMissing(t, err)
	t.Cleanup(func() { assert.NoError(t, pg.Stop(context.Background())) })
	exec := func(sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, pg.DSN("postgres"))
		require.NoError(t, err)
		defer func() { _ = conn.Close(ctx) }()
		_, err = conn.Exec(ctx, sql)
		require.NoError(t, err)
	}
	exec(`CREATE TABLE probe (id int PRIMARY KEY)`)
	exec(`INSERT INTO probe VALUES (1)`)
	conn, err := pgx.Connect(ctx, pg.DSN("postgres"))
	require.NoError(t, err)
	// Wait until the standby has replayed the first row: then only the
	// second one is in flight on the slow link.
	require.Eventually(t, func() bool {
		var lag int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_replication WHERE replay_lsn = pg_current_wal_lsn()`).Scan(&lag)
		return err == nil && lag == 1
	}, 30*time.Second, 50*time.Millisecond)
	_, err = conn.Exec(ctx, `INSERT INTO probe VALUES (2)`)
	require.NoError(t, err)
	_ = conn.Close(ctx)
	_, err = pg.Failover(ctx)
	require.NoError(t, err)

	conn, err = pgx.Connect(ctx, pg.DSN("postgres"))
	require.NoError(t, err)
	defer func() { _ = conn.Close(ctx) }()
	var ids []int
	rows, err := conn.Query(ctx, `SELECT id FROM probe ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var id int
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []int{1}, ids, "the row committed within the link's delay of the crash is lost")
}
