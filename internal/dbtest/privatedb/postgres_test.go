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
	pg := startPostgres(t, privatedb.PGOptions{Standby: true})
	execPG(t, pg, `CREATE TABLE probe (id serial PRIMARY KEY)`)
	for round := 1; round <= 2; round++ {
		execPG(t, pg, `INSERT INTO probe DEFAULT VALUES`)
		assert.Len(t, probeIDs(t, pg), round)
		was := pg.PrimaryPort()
		times, err := pg.Failover(ctx)
		require.NoError(t, err)
		assert.NotEqual(t, was, pg.PrimaryPort())
		assert.Less(t, times.Down, 10*time.Second)
		again, err := privatedb.OpenPostgres(pg.Dir)
		require.NoError(t, err)
		assert.Equal(t, pg.PrimaryPort(), again.PrimaryPort(), "the state file follows the failover")
	}
	execPG(t, pg, `INSERT INTO probe DEFAULT VALUES`)
	assert.Len(t, probeIDs(t, pg), 3, "every committed row, through two failovers (a promoted server's sequence skips ahead)")
}

// TestAsynchronousStandbyBehindASlowLinkLosesTheLastCommits: a row
// committed on the primary less than the link's delay before its crash
// is not on the promoted standby; one committed long before is.
func TestAsynchronousStandbyBehindASlowLinkLosesTheLastCommits(t *testing.T) {
	ctx := context.Background()
	const delay = 500 * time.Millisecond
	pg := startPostgres(t, privatedb.PGOptions{Standby: true, Async: true, ReplicationDelay: delay})
	execPG(t, pg, `CREATE TABLE probe (id int PRIMARY KEY)`)
	execPG(t, pg, `INSERT INTO probe VALUES (1)`)
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

	assert.Equal(t, []int{1}, probeIDs(t, pg), "the row committed within the link's delay of the crash is lost")
}

// startPostgres starts a private cluster for the test, stopped at its end.
func startPostgres(t *testing.T, opts privatedb.PGOptions) *privatedb.PG {
	t.Helper()
	pg, err := privatedb.StartPostgres(context.Background(), opts)
	skipMissing(t, err)
	t.Cleanup(func() { assert.NoError(t, pg.Stop(context.Background())) })
	return pg
}

// execPG runs sql on the cluster's primary, through its DSN.
func execPG(t *testing.T, pg *privatedb.PG, sql string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pg.DSN("postgres"))
	require.NoError(t, err)
	defer func() { _ = conn.Close(context.Background()) }()
	_, err = conn.Exec(context.Background(), sql)
	require.NoError(t, err)
}

// probeIDs are the ids of the probe table on the primary, in order.
func probeIDs(t *testing.T, pg *privatedb.PG) []int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pg.DSN("postgres"))
	require.NoError(t, err)
	defer func() { _ = conn.Close(context.Background()) }()
	rows, err := conn.Query(context.Background(), `SELECT id FROM probe ORDER BY id`)
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	return ids
}
