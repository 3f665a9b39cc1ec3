//go:build unix

package chaos_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/chaos"
)

// TestRunSQLite: three probe workers sharing one SQLite file (a fresh
// temporary one) for 18 s of kills, stops, terms and clock skews (seed 30
// has room for each kind), then the quiet phase; every invariant holds
// and the file is removed after the clean run.
func TestRunSQLite(t *testing.T) {
	kinds := []chaos.FaultKind{chaos.FaultKill, chaos.FaultStop, chaos.FaultTerm, chaos.FaultSkew}
	sc := chaos.Scenario{
		DSN: "sqlite", Worker: []string{workerBin}, Seed: 30, Duration: 18 * time.Second, Faults: kinds,
		Workload: chaos.Workload{Jobs: 80, PermitJobs: 16},
	}
	if os.Getenv("RATCHET_TEST_LONG") == "1" {
		sc.Duration = 60 * time.Second
		sc.Workload = chaos.Workload{}
	}
	rep := chaos.RunT(t, sc)
	for _, k := range kinds {
		assert.Positive(t, rep.Injected[k], "%s injected", k)
	}
	assert.Zero(t, rep.Lost)
	assert.Zero(t, rep.DoubleFinalized)
	assert.Positive(t, rep.Executions)
	assert.True(t, filepath.IsAbs(rep.Schema), "the report names the file: %s", rep.Schema)
	assert.False(t, rep.SchemaKept)
	_, err := os.Stat(rep.Schema)
	assert.ErrorIs(t, err, os.ErrNotExist, "the run's own file is removed after a clean run")
	for _, inj := range rep.Timeline {
		if inj.Kind == chaos.FaultSkew {
			assert.Contains(t, inj.Note, "clock ")
		}
	}
}

// TestRunSQLiteNamedFile: a file named in the DSN is created, used and
// kept; workers started with --skew -700ms run on a clock 700 ms behind
// (their finalizations' times, from the engine's clock, come 700 ms before
// the ends of the executions in the ledger, from the machine's clock).
func TestRunSQLiteNamedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chaos.db")
	rep := chaos.RunT(t, chaos.Scenario{
		DSN: "sqlite://" + path, Worker: []string{workerBin, "--skew", "-700ms"}, Seed: 1, Workers: 2, Duration: 5 * time.Second,
		Quiet: 10 * time.Second, Faults: []chaos.FaultKind{},
		Workload: chaos.Workload{Jobs: 20, PermitJobs: -1, PoisonJobs: -1, MinMillis: 10, MaxMillis: 50},
	})
	require.True(t, rep.OK())
	assert.Equal(t, path, rep.Schema)
	assert.True(t, rep.SchemaKept)
	assert.FileExists(t, path)
	assert.GreaterOrEqual(t, rep.Statuses["SUCCEEDED"], 20)

	opened, err := chaos.OpenStore(context.Background(), "sqlite:"+path, "", false)
	require.NoError(t, err)
	defer opened.Close()
	runs, err := opened.Ledger.Executions(context.Background())
	require.NoError(t, err)
	finals, err := opened.Ledger.Finals(context.Background())
	require.NoError(t, err)
	ended := map[uuid.UUID]time.Time{}
	for _, r := range runs {
		if r.Outcome == chaos.OutcomeOK {
			ended[r.JobID] = r.EndedAt
		}
	}
	var lags []time.Duration
	for _, f := range finals {
		if e, ok := ended[f.JobID]; ok && f.Event == "succeeded" {
			lags = append(lags, f.At.Sub(e))
		}
	}
	require.NotEmpty(t, lags)
	slices.Sort(lags)
	median := lags[len(lags)/2]
	assert.Less(t, median, -600*time.Millisecond, "the engine's clock is 700 ms behind the machine's")
	assert.Greater(t, median, -800*time.Millisecond)
}
