//go:build unix

package chaos_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/chaos"
	"github.com/ratchet-go/ratchet/internal/dbtest/privatedb"
	"github.com/ratchet-go/ratchet/stores/mysql"
)

// TestRunDBNodeLoss: the Galera node the fleet writes through killed
// under the nodes (db-node-loss) and brought back, on a private
// three-node cluster, for 25 s with seed 1 (one loss); every node moves to
// the next server of the DSN's list, and every invariant holds.
func TestRunDBNodeLoss(t *testing.T) {
	g := privateGalera(t)
	rep := chaos.RunT(t, galeraScenario(g, 1, false, 25*time.Second))
	require.Positive(t, rep.Injected[chaos.FaultDBNodeLoss], "db-node-loss injected")
	for _, inj := range rep.Timeline {
		assert.Empty(t, inj.Note, "the node was lost and rejoined")
		assert.Len(t, inj.Resumed, 2, "both nodes ran a job after the loss")
		for node, d := range inj.Resumed {
			assert.Less(t, time.Duration(d), 15*time.Second, "%s resumed (writes wait out the cluster's 5 s suspect timeout)", node)
		}
	}
	assert.Zero(t, rep.Lost)
	assert.Zero(t, rep.DoubleFinalized)
}

// TestMigrateOnEveryGaleraNodeAtOnce: three migrators of one new database,
// each through a different node of the cluster, apply each migration once
// and all succeed: GET_LOCK is local to a node, the lock row is not.
func TestMigrateOnEveryGaleraNodeAtOnce(t *testing.T) {
	g := privateGalera(t)
	var wg sync.WaitGroup
	applied := make([][]int, 3)
	errs := make([]error, 3)
	for i := range 3 {
		wg.Go(func() {
			applied[i], errs[i] = mysql.MigrateDSN(context.Background(), "mysql://root@"+g.NodeAddr(i)+"/", "migrate_at_once")
		})
	}
	wg.Wait()
	var versions []int
	for i := range 3 {
		require.NoError(t, errs[i], "migrator %d", i)
		versions = append(versions, applied[i]...)
	}
	latest := versions[len(versions)-1]
	assert.Len(t, versions, latest, "every version applied once, by one of the migrators")
}

// galeraScenario is a burn-down on three node processes (two for short
// runs) with the loss of a Galera node as the only fault: single-writer
// (every worker on the DSN's first server that answers), or spread over
// the three servers (multi-writer).
func galeraScenario(g *privatedb.Galera, seed uint64, spread bool, d time.Duration) chaos.Scenario {
	workers := 2
	if d > 30*time.Second {
		workers = 3
	}
	return chaos.Scenario{
		DSN: g.DSN("test"), Worker: []string{workerBin}, Seed: seed, Workers: workers, Duration: d, SpreadHosts: spread,
		Faults:     []chaos.FaultKind{chaos.FaultDBNodeLoss},
		DBNodeLoss: privateDBCommand("galera", "kill", g.Dir), DBNodeRejoin: privateDBCommand("galera", "rejoin", g.Dir),
		Workload: galeraWorkload(d),
	}
}

// galeraWorkload is a short run's workload, or a burn-down for a long one.
func galeraWorkload(d time.Duration) chaos.Workload {
	if d > 30*time.Second {
		return chaos.Workload{Jobs: 2500, PermitJobs: 20, MinMillis: 5, MaxMillis: 50, Workflows: 10}
	}
	return chaos.Workload{Jobs: 300, PermitJobs: 10, MinMillis: 5, MaxMillis: 50}
}

var galeraOnce struct {
	sync.Once
	g   *privatedb.Galera
	err error
}

// privateGalera is a three-node Galera cluster that the tests of this
// process share (it takes about 20 s to start), stopped when they end. It
// skips the test when MariaDB's server, galera-4 or rsync is missing, and
// fails it under CI=true, whose machine installs them.
func privateGalera(t testing.TB) *privatedb.Galera {
	t.Helper()
	galeraOnce.Do(func() {
		galeraOnce.g, galeraOnce.err = privatedb.StartGalera(context.Background(), privatedb.GaleraOptions{})
	})
	if errors.Is(galeraOnce.err, privatedb.ErrMissing) && os.Getenv("CI") != "true" {
		t.Skip(galeraOnce.err)
	}
	require.NoError(t, galeraOnce.err)
	return galeraOnce.g
}

// stopGalera stops the shared cluster, if one was started.
func stopGalera() {
	if galeraOnce.g != nil {
		_ = galeraOnce.g.Stop(context.Background())
	}
}

// TestGaleraNodeLossLong (opt-in: RATCHET_TEST_LONG=1): five runs of 40 s
// on three node processes in each layout, single-writer (every node on the
// DSN's first server that answers) and multi-writer (the list turned per
// node), each losing the Galera node with the most client connections
// once or twice: no job lost, none finalized twice. The conflicts the
// layout cost are logged.
func TestGaleraNodeLossLong(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") != "1" {
		t.Skip("opt-in: RATCHET_TEST_LONG=1 (ten 40 s runs losing a Galera node)")
	}
	g := privateGalera(t)
	for _, spread := range []bool{false, true} {
		layout := map[bool]string{false: "single-writer", true: "multi-writer"}[spread]
		t.Run(layout, func(t *testing.T) {
			for seed := uint64(1); seed <= 5; seed++ {
				require.NoError(t, g.Ready(context.Background()), "the cluster before %s seed %d", layout, seed)
				before, err := g.Conflicts(context.Background())
				require.NoError(t, err)
				rep := chaos.RunT(t, galeraScenario(g, seed, spread, 40*time.Second))
				after, err := g.Conflicts(context.Background())
				require.NoError(t, err)
				require.Positive(t, rep.Injected[chaos.FaultDBNodeLoss])
				assert.Zero(t, rep.Lost, "%s seed %d", layout, seed)
				assert.Zero(t, rep.DoubleFinalized, "%s seed %d", layout, seed)
				n := privatedb.ConflictsBetween(before, after)
				t.Logf("galera %s seed %d: %d executions, %d conflicts (%.1f per 1,000 executions)",
					layout, seed, rep.Executions, n, float64(n)*1000/float64(max(rep.Executions, 1)))
			}
		})
	}
}
