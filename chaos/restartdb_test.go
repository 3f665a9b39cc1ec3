//go:build unix

package chaos_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/chaos"
	"github.com/ratchet-go/ratchet/internal/dbtest/privatedb"
)

// TestRunRestartDB: the database restarted under the nodes (restart-db) on
// a private PostgreSQL cluster of the test's own — never the shared
// server, which other tests use — for 10 s with seed 1 (one restart);
// every node reconnects and every invariant holds.
func TestRunRestartDB(t *testing.T) {
	pg := privatePostgres(t, false)
	rep := chaos.RunT(t, chaos.Scenario{
		DSN: pg.DSN("postgres"), Worker: []string{workerBin}, Seed: 1, Workers: 2, Duration: 10 * time.Second,
		Faults: []chaos.FaultKind{chaos.FaultRestartDB}, RestartDB: privateDBCommand("postgres", "restart", pg.Dir),
		Workload: chaos.Workload{Jobs: 60, PermitJobs: 10},
	})
	assert.Positive(t, rep.Injected[chaos.FaultRestartDB], "restart-db injected")
	for _, inj := range rep.Timeline {
		assert.Empty(t, inj.Node, "a restart hits every node's database")
		assert.Empty(t, inj.Note, "the restart ran and the database answered again")
	}
	assert.Zero(t, rep.Lost)
	assert.Zero(t, rep.DoubleFinalized)
	assert.Contains(t, rep.Text(), "restart-db  database")
}

// TestRunFailover: the primary of a private PostgreSQL pair with
// synchronous replication stopped as a crash would and its standby
// promoted under the nodes (failover), for 12 s with seed 1 (one
// failover); every node finds the new primary through the multi-host DSN,
// nothing is lost or finalized twice, and every node ran a job again
// within 10 s of the primary's stop.
func TestRunFailover(t *testing.T) {
	pg := privatePostgres(t, true)
	rep := chaos.RunT(t, chaos.Scenario{
		DSN: pg.DSN("postgres"), Worker: []string{workerBin}, Seed: 1, Workers: 2, Duration: 12 * time.Second,
		Faults: []chaos.FaultKind{chaos.FaultFailover}, Failover: privateDBCommand("postgres", "failover", pg.Dir),
		Workload: chaos.Workload{Jobs: 300, PermitJobs: 10, MinMillis: 20, MaxMillis: 100},
	})
	require.Positive(t, rep.Injected[chaos.FaultFailover], "failover injected")
	for _, inj := range rep.Timeline {
		assert.Empty(t, inj.Note, "the failover ran and the database answered again")
		assert.Len(t, inj.Resumed, 2, "both nodes ran a job after the failover")
		for node, d := range inj.Resumed {
			assert.Less(t, time.Duration(inj.For+d), 10*time.Second, "%s resumed", node)
		}
	}
	assert.Zero(t, rep.Lost)
	assert.Zero(t, rep.DoubleFinalized)
	assert.Contains(t, rep.Text(), "failover    database")
}

// privatePostgres starts a private PostgreSQL server, or a primary and a
// synchronous standby, removed at the end of the test. It skips the test
// when PostgreSQL's server packages are missing, and fails it under
// CI=true, whose machine has them.
func privatePostgres(t *testing.T, standby bool) *privatedb.PG {
	t.Helper()
	pg, err := privatedb.StartPostgres(context.Background(), privatedb.PGOptions{Standby: standby})
	if errors.Is(err, privatedb.ErrMissing) && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, pg.Stop(context.Background())) })
	return pg
}

// privateDBCommand is the command that runs a step of privatedb.Main on a
// private cluster: this test binary, which TestMain sends there.
func privateDBCommand(args ...string) []string {
	return append([]string{os.Args[0], privateDBArg}, args...)
}

// privateDBArg is the first argument of a privateDBCommand.
const privateDBArg = "privatedb"
