package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestVacuumerCountsClaimedJobs(t *testing.T) {
	v := newVacuumer(100)
	require.False(t, v.add(60))
	require.True(t, v.add(40), "the 100th claimed job starts a VACUUM")
	require.False(t, v.add(500), "one VACUUM at a time")
	v.done(4_000_000, false)
	require.False(t, v.add(100), "claims during a VACUUM count from its start")
	require.False(t, v.add(199_000))
	require.True(t, v.add(1_000), "a table of 4,000,000 rows is vacuumed every 200,000 claimed jobs")
	v.done(-1, true)
	require.False(t, v.add(1_000_000), "a role that may not vacuum runs none")

	off := newVacuumer(-1)
	require.False(t, off.add(1_000_000), "a negative VacuumEvery runs none")
	require.Equal(t, int64(DefaultVacuumEvery), newVacuumer(0).every)
}

// vacuumCount is the job table's count of VACUUMs run by hand (not by
// autovacuum).
func vacuumCount(t *testing.T, s *Store) int64 {
	t.Helper()
	var n int64
	require.NoError(t, s.pool.QueryRow(context.Background(),
		`SELECT vacuum_count FROM pg_catalog.pg_stat_user_tables WHERE relid = $1::regclass`, s.sql.jobTable).Scan(&n))
	return n
}

func TestClaimsVacuumTheJobTable(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	s, err := Open(ctx, dsn, Options{Schema: schema, ApplyMigrations: true, VacuumEvery: 10})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	var js []*spi.Job
	for range 30 {
		js = append(js, job(spi.PriorityNormal, t0))
	}
	insert(t, s, js...)

	require.Len(t, claim(t, s, "n1", 6, t0, 0), 6)
	s.vacuum.runs.Wait()
	require.Zero(t, vacuumCount(t, s), "6 claimed jobs start no VACUUM")
	require.Len(t, claim(t, s, "n1", 4, t0, 0), 4)
	s.vacuum.runs.Wait()
	require.EqualValues(t, 1, vacuumCount(t, s), "the 10th claimed job starts one")
	require.Len(t, claim(t, s, "n1", 10, t0, 0), 10)
	s.vacuum.runs.Wait()
	require.EqualValues(t, 2, vacuumCount(t, s), "and the 20th the next")

	// The claims read no entries of claimed jobs any more: the index
	// holds the pending jobs' alone.
	var entries int64
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT reltuples::bigint FROM pg_catalog.pg_class WHERE oid = $1::regclass`,
		qualify(schema, "idx_scheduler_job_claim")).Scan(&entries))
	require.EqualValues(t, 10, entries)
}

func TestNoVacuumWithoutThePrivilege(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	owner := openSchema(t, dsn, schema)
	role := "ratchet_novacuum_" + schema
	exec(t, owner, `CREATE ROLE `+role+` LOGIN`)
	t.Cleanup(func() {
		_, _ = owner.pool.Exec(ctx, `DROP OWNED BY `+role)
		_, _ = owner.pool.Exec(ctx, `DROP ROLE `+role)
	})
	exec(t, owner, fmt.Sprintf(`GRANT USAGE ON SCHEMA %q TO %s; GRANT ALL ON ALL TABLES IN SCHEMA %q TO %s`,
		schema, role, schema, role))
	cfg := owner.pool.Config().ConnConfig
	s, err := Open(ctx, fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", role, cfg.Host, cfg.Port, cfg.Database),
		Options{Schema: schema, VacuumEvery: 1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	insert(t, owner, job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0))

	require.Len(t, claim(t, s, "n1", 1, t0, 0), 1)
	s.vacuum.runs.Wait()
	require.True(t, s.vacuum.denied)
	require.Len(t, claim(t, s, "n1", 1, t0, 0), 1)
	s.vacuum.runs.Wait()
	require.Zero(t, vacuumCount(t, owner), "a role that may not vacuum the table runs no VACUUM")
}
