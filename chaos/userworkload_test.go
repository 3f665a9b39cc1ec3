//go:build unix

package chaos_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/chaos"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// userWorker builds testdata/userworker, a worker binary with tasks of its
// own (orders.charge, orders.ship) and a workload (chaos.WithWorkload).
func userWorker(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "userworker")
	out, err := exec.Command(goTool(), "build", "-o", bin, "./testdata/userworker").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// TestRunUserWorkload: the application's own tasks under kills, submitted
// by the worker binary in its submit role (the command line's way) or by
// a function in the harness's process; every execution of them is in the
// ledger and every invariant holds. A workload that fails fails the run.
func TestRunUserWorkload(t *testing.T) {
	bin := userWorker(t)
	charge := ratchet.NewVoidTask("orders.charge", func(context.Context, struct {
		ID     int `json:"id"`
		Millis int `json:"millis"`
	}) error {
		return nil
	})
	inProcess := func(ctx context.Context, c *ratchet.Client, rng *rand.Rand, window time.Duration) error {
		for i := range 30 {
			if _, err := charge.Submit(ctx, c, struct {
				ID     int `json:"id"`
				Millis int `json:"millis"`
			}{i, 10 + rng.IntN(100)}); err != nil {
				return err
			}
		}
		return nil
	}
	tests := []struct {
		name  string
		sc    chaos.Scenario
		jobs  int
		edges int
	}{
		// 32 charges and 8 workflows charge → ship, beside 2 probe
		// workflows of 4 edges.
		{"worker-submits", chaos.Scenario{WorkerSubmits: true}, 48, 8 + 2*4},
		{"in-process", chaos.Scenario{Submit: inProcess, Workload: chaos.Workload{NoProbes: true}}, 30, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dsn, schema := dbtest.Postgres(t)
			sc := tc.sc
			sc.DSN, sc.Schema, sc.Worker, sc.Seed, sc.Duration = dsn, schema, []string{bin}, 3, 8*time.Second
			sc.Faults = []chaos.FaultKind{chaos.FaultKill}
			if !sc.Workload.NoProbes {
				sc.Workload = chaos.Workload{Jobs: 20, PermitJobs: -1, PoisonJobs: -1, Workflows: 2}
			}
			rep := chaos.RunT(t, sc)
			assert.Equal(t, tc.jobs, rep.UserJobs)
			assert.Equal(t, tc.edges, rep.Edges, "the application's workflow edges are read from the store")
			assert.Zero(t, rep.Lost)
			assert.GreaterOrEqual(t, rep.Executions, rep.Statuses["SUCCEEDED"], "every execution recorded, the application's too")
		})
	}

	t.Run("failing", func(t *testing.T) {
		dsn, schema := dbtest.Postgres(t)
		_, err := chaos.Run(context.Background(), chaos.Scenario{
			DSN: dsn, Schema: schema, Worker: []string{bin}, Seed: 3, Duration: 5 * time.Second, Workers: 1,
			Faults: []chaos.FaultKind{}, Workload: chaos.Workload{NoProbes: true}, LogDir: t.TempDir(),
			Submit: func(context.Context, *ratchet.Client, *rand.Rand, time.Duration) error {
				return errors.New("no orders today")
			},
		})
		require.ErrorContains(t, err, "no orders today")
	})

	t.Run("probe-worker-has-no-workload", func(t *testing.T) {
		dsn, schema := dbtest.Postgres(t)
		_, err := chaos.Run(context.Background(), chaos.Scenario{
			DSN: dsn, Schema: schema, Worker: []string{workerBin}, Seed: 3, Duration: 5 * time.Second, Workers: 1,
			Faults: []chaos.FaultKind{}, Workload: chaos.Workload{NoProbes: true}, WorkerSubmits: true, LogDir: t.TempDir(),
		})
		require.ErrorContains(t, err, "this worker has no workload")
	})
}
